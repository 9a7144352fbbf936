"""How a run's answers were read: the unparsed answers by the reason they were refused, and a judge
model's readings (``--reader judge:SPEC``) against the rules'. Computed from records only; the
run's table (``engine.finish``) and the HTML report say both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lingdiag.records import JUDGE, JUDGED, UNPARSED, ItemRecord, unparsed_reason


def reasons(records: Sequence[ItemRecord]) -> dict[str, int]:
    """Unparsed answers per reason, most frequent first (failed items are not answers)."""
    counts = Counter(r for rec in records if (r := unparsed_reason(rec)) is not None)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(frozen=True, slots=True)
class Agreement:
    """A judge model's readings of one condition's answers beside the rules'."""

    model: str
    """The judge's model spec."""
    read: int
    """Answers the judge read (answered items only)."""
    judged: int
    """Records whose label is the judge's: the rules left the answer unparsed, the judge read a label."""
    both: int
    """Answers both the rules and the judge read a label in."""
    agree: int
    """Of ``both``, those where the labels are the same."""
    rules_only: int
    """Answers the rules read and the judge did not."""
    judge_only: int
    """Answers the judge read and the rules did not (``judged``)."""

    @property
    def rate(self) -> float | None:
        """``agree / both`` (None: no answer both read)."""
        return self.agree / self.both if self.both else None


def agreement(records: Sequence[ItemRecord]) -> Agreement | None:
    """The judge's readings of ``records`` against the rules'; None where no judge read any."""
    read = [r for r in records if r.error is None and isinstance(r.detail.get(JUDGE), Mapping)]
    if not read:
        return None
    model = str(read[0].detail[JUDGE].get("model", ""))
    both = agree = rules_only = judge_only = 0
    for r in read:
        rules = UNPARSED if r.detail.get(JUDGED) else r.label
        judge = r.detail[JUDGE].get("label", UNPARSED)
        if rules != UNPARSED and judge != UNPARSED:
            both += 1
            agree += rules == judge
        elif rules != UNPARSED:
            rules_only += 1
        elif judge != UNPARSED:
            judge_only += 1
    judged = sum(bool(r.detail.get(JUDGED)) for r in read)
    return Agreement(model, len(read), judged, both, agree, rules_only, judge_only)


def table_note(by_condition: Mapping[str, Sequence[ItemRecord]]) -> str:
    """The table's lines on reading: unparsed answers per reason, and the judge's readings where a
    judge read (empty where every answer was read by the rules).
    """
    lines = []
    unparsed = {c: reasons(rs) for c, rs in by_condition.items()}
    if any(unparsed.values()):
        lines.append("**Unparsed answers by reason** (the answer reader's, `lingdiag.parse.reader`): " + "; ".join(
            f"{c}: " + ", ".join(f"{reason} {n}" for reason, n in rs.items())
            + f" ({sum(rs.values())} of {len(by_condition[c])})" for c, rs in unparsed.items() if rs))
    judged = {c: a for c, rs in by_condition.items() if (a := agreement(rs)) is not None}
    if judged:
        lines.append("**Read by a judge model** (labels marked judged in the records): " + "; ".join(
            f"{c}: {a.model} read {a.read}, {a.judged} labels judged" + (
                f", agreeing with the rules on {a.agree} of {a.both} ({a.agree / a.both:.0%})" if a.both else "")
            + (f", {a.rules_only} read by the rules only" if a.rules_only else "") for c, a in judged.items()))
    return "".join(line + "\n\n" for line in lines)

