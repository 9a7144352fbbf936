"""Two runs (or two conditions of one run) compared for the viewer's compare page, from their summaries:
the paired tests of ``lingdiag compare`` (the same function on the same pairs, so the same numbers) and
every item paired by id (condition and id for two runs), A right and B wrong first, then the reverse,
then the rest, as arrays: a page draws a hundred of them, however many there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lingdiag.analysis.compare import Comparison, compare_summaries, compare_summary_conditions
from lingdiag.reading import RunSummary
from lingdiag.reading.summary import RIGHT, WRONG

if TYPE_CHECKING:
    from numpy.typing import NDArray

KINDS = ("A right, B wrong", "B right, A wrong", "agree or no gold")
"""A pair's kind, in the order pairs are listed."""


@dataclass(frozen=True, eq=False)
class Pairs:
    """The tests and the paired records of two sides."""

    rows: list[Comparison]
    a: RunSummary
    b: RunSummary
    line_a: NDArray[np.intp]
    """Each pair's record in A (its 0-based line), pairs in page order."""
    line_b: NDArray[np.intp]
    kind: NDArray[np.int8]
    """Index into :data:`KINDS`."""

    def __len__(self) -> int:
        return len(self.kind)

    def counts(self) -> dict[str, int]:
        """Pairs of each kind (kinds with none left out)."""
        found = np.bincount(self.kind, minlength=len(KINDS))
        return {KINDS[k]: int(n) for k, n in enumerate(found) if n}


def _matched(a: RunSummary, lines_a: NDArray[np.intp], b: RunSummary,
             lines_b: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The lines of A and B holding the same item, neither a backend error, in A's order."""
    lines_a = lines_a[~a.columns.error[lines_a]]
    lines_b = lines_b[~b.columns.error[lines_b]]
    items_b = b.columns.item[lines_b]
    order = np.argsort(items_b, kind="stable")
    ordered = items_b[order]
    at = np.searchsorted(ordered, a.columns.item[lines_a])
    hit = at < len(ordered)
    hit[hit] = ordered[at[hit]] == a.columns.item[lines_a][hit]
    return lines_a[hit], lines_b[order[at[hit]]]


def compared(a: RunSummary, b: RunSummary, *, seed: int = 0, conditions: tuple[str, str] | None = None) -> Pairs:
    """Runs ``a`` and ``b`` compared on every condition they share, or, with ``conditions``, two conditions of
    run ``a`` (``b`` is ``a``).

    Raises:
        ConfigError: nothing to compare (no shared condition, an unknown one, no graded pair).
    """
    if conditions is not None:
        rows = compare_summary_conditions(a, *conditions, seed=seed)
        codes = [a.vocab.conditions.get(c) for c in conditions]
        sides = [(a.columns.of(codes[0]), b.columns.of(codes[1]))]
    else:
        rows = compare_summaries(a, b, seed=seed)
        shared = [c for c in dict.fromkeys(a.columns.condition.tolist()) if c in set(b.columns.condition.tolist())]
        sides = [(a.columns.of(c), b.columns.of(c)) for c in shared]
    matched = [_matched(a, la, b, lb) for la, lb in sides]
    line_a = np.concatenate([m[0] for m in matched]) if matched else np.zeros(0, np.intp)
    line_b = np.concatenate([m[1] for m in matched]) if matched else np.zeros(0, np.intp)
    oa, ob = a.columns.outcome[line_a], b.columns.outcome[line_b]
    kind = np.where((oa == RIGHT) & (ob == WRONG), 0, np.where((ob == RIGHT) & (oa == WRONG), 1, 2)).astype(np.int8)
    order = np.argsort(kind, kind="stable")
    return Pairs(rows, a, b, line_a[order], line_b[order], kind[order])
