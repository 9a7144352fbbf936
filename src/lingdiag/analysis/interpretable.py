"""Whether a condition's answers can be read as the model's knowledge: the rule the HTML report
greys conditions out by (:mod:`lingdiag.report.findings`) and ``lingdiag compare`` flags (and, on
request, skips) them by.

A condition is *degenerate* (not interpretable) when at least half of its answers are unparsed
or failed, or when it gives the same label to every item: its accuracy and rates then measure
the parser or a constant answer, not the model's knowledge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from lingdiag.records import UNPARSED, ItemRecord
from lingdiag.rundir import RunStore

DEGENERATE_SHARE = 0.5
"""A condition with at least this share of unparsed or failed answers is not interpretable."""


def degenerate_reason(records: Sequence[ItemRecord]) -> str | None:
    """Why one condition's records are not interpretable, or None when they are."""
    if not records:
        return None
    bad = sum(r.error is not None or r.label == UNPARSED for r in records)
    if bad / len(records) >= DEGENERATE_SHARE:
        return f"{bad / len(records):.0%} unparsed or failed"
    labels = {r.label for r in records}
    if len(records) > 1 and len(labels) == 1:
        return f"one label ({next(iter(labels))}) for every item"
    return None


def not_interpretable(run: Path) -> dict[str, str]:
    """Condition → why it is not interpretable, for every such condition of the run (all its
    records, failed ones included, as the report counts them).
    """
    by: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in RunStore(run).load_records():
        by[r.condition].append(r)
    return {c: reason for c, records in by.items() if (reason := degenerate_reason(records)) is not None}
