"""An imported run's answers read again by lingdiag's answer reader, beside the harness's extraction.

For each generated answer of a ``harness`` run: lingdiag's reading now (``parse.labels.parse_label``
over the task's choices) and the harness's own filtered answer and verdict as it logged them. Where
they differ, the item is listed as one of two kinds: **a label the answer did not give** (the harness
extracted a choice where lingdiag reads none, or another) or **an answer left unread** (the harness's
extraction is no choice where lingdiag reads one). Both accuracies are over the same items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.interop.answers import read_answer
from lingdiag.records import UNPARSED, TextOutput
from lingdiag.rundir import RunStore
from lingdiag.suites.harness import HARNESS, NAME

GAVE = "harness gave a label the answer did not give"
UNREAD = "harness left the answer unread"
OTHER = "read as different labels"


@dataclass(frozen=True)
class Disagreement:
    """One item lingdiag and the harness read differently."""

    item_id: str
    kind: str
    """:data:`GAVE` or :data:`UNREAD` (or :data:`OTHER`: both read a choice, different ones)."""
    harness: str
    """The harness's extracted answer, as it logged it."""
    lingdiag: str
    """lingdiag's label, or ``UNPARSED`` with the reason."""
    gold: str | None
    answer: str
    """The generated answer both read."""


@dataclass(frozen=True)
class Reread:
    """One run's answers re-read."""

    run: Path
    task: str
    harness: str
    n: int
    """Generated answers re-read (0: a log-likelihood task, nothing to read)."""
    accuracy_harness: float
    accuracy_lingdiag: float
    disagreements: list[Disagreement] = field(default_factory=list)

    def count(self, kind: str) -> int:
        """The disagreements of ``kind``."""
        return sum(d.kind == kind for d in self.disagreements)


def reread(run_dir: Path) -> list[Reread]:
    """Every task of the imported run ``run_dir`` re-read (one per condition).

    Raises:
        RunError: ``run_dir`` is not a run imported from a harness.
    """
    store = RunStore(run_dir)
    meta = store.read_meta()
    if meta.suite != NAME or meta.imported is None or meta.imported.harness is None:
        raise RunError(f"{run_dir}: not a run imported from lm-eval or inspect (lingdiag import); "
                       "only an imported run carries another harness's reading")
    by_task: dict[str, list[tuple[bool | None, bool, Disagreement | None]]] = {}
    for r in store.load_records():
        text = next((o.text for o in r.outputs if isinstance(o, TextOutput)), None)
        rows = by_task.setdefault(r.condition, [])
        if text is None:
            continue
        choices = [str(c) for c in r.fields.get("choices") or ()]
        label, detail = read_answer(text, r.fields)
        harness = dict(r.detail.get(HARNESS) or {})
        theirs = str(harness.get("answer"))
        verdict = harness.get("correct")
        shown = label if label != UNPARSED else f"{UNPARSED} ({detail.get('unparsed', '')})"
        d = None
        if theirs != label:
            kind = UNREAD if theirs not in choices else GAVE if label == UNPARSED else OTHER
            d = Disagreement(r.item_id, kind, theirs, shown, r.gold, text)
        rows.append((None if verdict is None else bool(verdict), label == r.gold, d))
    out = []
    for task, rows in by_task.items():
        verdicts = [v for v, _, _ in rows if v is not None]
        out.append(Reread(Path(run_dir), task, meta.imported.harness.name, len(rows),
                          sum(verdicts) / len(verdicts) if verdicts else math.nan,
                          sum(ok for _, ok, _ in rows) / len(rows) if rows else math.nan,
                          [d for _, _, d in rows if d is not None]))
    return out


def summary_lines(results: Sequence[Reread]) -> list[str]:
    """One line per run and task: both accuracies and the disagreements by kind."""
    lines = []
    for r in results:
        if not r.n:
            lines.append(f"{r.run} {r.task}: no generated answer to re-read (a log-likelihood task)")
            continue
        lines.append(f"{r.run} {r.task}: {r.n} answers; accuracy {r.harness} {r.accuracy_harness:.3f}, lingdiag "
                     f"{r.accuracy_lingdiag:.3f}; {r.count(GAVE)} labels the answer did not give, {r.count(UNREAD)} "
                     f"answers {r.harness} left unread, {r.count(OTHER)} read as different labels")
    return lines
