"""From response files to agreement, gold labels and the files written (``lingdiag human import``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.human.agreement import Agreement, agreement
from lingdiag.human.export import Study
from lingdiag.human.gold import GoldRule, ItemGold, derive, write_dataset
from lingdiag.human.importing import Responses, read_responses
from lingdiag.records import Item
from lingdiag.suite import ItemView
from lingdiag.tabular import write_csv


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What ``import`` read, measured and wrote."""

    study: str
    n_rows: int
    duplicates: int
    excluded_raters: Sequence[str]
    raters: Sequence[str]
    agreement: Sequence[Agreement]
    gold_rule: str | None
    golds: Sequence[ItemGold]
    unrated_items: Sequence[str]
    """Items left without gold because a variant has no kept rating."""
    written: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _write_review(study: Study, responses: Responses, path: Path) -> int:
    """Quality review: per stimulus, the mean of each scale and the raters' corrections."""
    kind = study.kind
    stimuli = {s.id: s for s in study.stimuli if s.expected is None}
    rows = []
    for sid, s in stimuli.items():
        got = [a for a in responses.answers if a.stimulus == sid]
        row: dict[str, Any] = {"item_id": s.item_id, "variant": s.variant, "text": s.text, "n": len(got)}
        for q in kind.questions:
            if q.scale:
                vals = [a.values[q.key] for a in got if q.key in a.values]
                row[f"mean_{q.key}"] = f"{sum(vals) / len(vals):.3f}" if vals else ""
            else:
                row[q.key] = " | ".join(a.texts[q.key] for a in got if q.key in a.texts)
        rows.append(row)
    return write_csv(path, list(rows[0]), [list(r.values()) for r in rows])


def import_study(study: Study, paths: Sequence[Path], items: Sequence[Item], view: ItemView,
                 rule: GoldRule | None, out: Path | None) -> ImportReport:
    """Read ``paths``, measure agreement per scale question and, for a one-scale study with a
    ``rule``, derive gold labels and write them to ``out`` as a dataset file; a study with
    several scales (quality review) writes a per-sentence review table to ``out`` instead.
    """
    kind = study.kind
    responses = read_responses(paths, study)
    if not responses.raters:
        raise DatasetError(f"no rater kept ({len(responses.excluded_raters)} missed an attention check, the others "
                           "answered no real stimulus); nothing to measure or write", path=", ".join(map(str, paths)))
    agreements = []
    for q in kind.scales:
        table = {(a.rater, a.stimulus): a.values[q.key] for a in responses.answers if q.key in a.values}
        if table:
            agreements.append(agreement(q.key, kind.level, table, study.lists, study.seed))
    golds: list[ItemGold] = []
    unrated: list[str] = []
    written = None
    if len(kind.scales) == 1 and rule is not None:
        key = kind.scales[0].key
        stimuli = {s.id: s for s in study.stimuli if s.expected is None}
        variants: dict[str, list[str]] = {}
        for s in stimuli.values():
            variants.setdefault(s.item_id, []).append(s.variant)
        ratings: dict[tuple[str, str], list[float]] = {}
        for a in responses.answers:
            if key in a.values:
                s = stimuli[a.stimulus]
                ratings.setdefault((s.item_id, s.variant), []).append(a.values[key])
        golds, unrated = derive([it for it in items if it.id in variants], variants, ratings, rule)
        if out is not None and golds:
            write_dataset(items, view, golds, rule, out)
            written = str(out)
    elif out is not None and responses.answers:
        _write_review(study, responses, out)
        written = str(out)
    return ImportReport(kind.name, responses.n_rows, responses.duplicates, responses.excluded_raters,
                        responses.raters, agreements, rule.name if rule and len(kind.scales) == 1 else None,
                        golds, unrated, written)
