"""Whether a condition's answers can be read as the model's knowledge: the one rule every output
applies. The HTML report greys such conditions out (:mod:`lingdiag.report.findings`); ``table.md``
and the report's Markdown open with :func:`note`; ``lingdiag compare``, ``competence`` and ``mixed``
flag (``compare`` on request skips) them; figures mark them and draw no statistic through them.

A condition is *degenerate* (not interpretable) when at least half of its answers are unparsed
or failed, or when it gives the same label to every item although the items' gold labels differ
from it: its accuracy and rates then measure the parser or a constant answer, not the model's
knowledge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.metrics.stats import percent
from lingdiag.records import UNPARSED, ItemRecord

DEGENERATE_SHARE = 0.5
"""A condition with at least this share of unparsed or failed answers is not interpretable."""


def degenerate_reason(records: Sequence[ItemRecord]) -> str | None:
    """Why one condition's records are not interpretable, or None when they are."""
    if not records:
        return None
    bad = sum(r.error is not None or r.label == UNPARSED for r in records)
    if bad / len(records) >= DEGENERATE_SHARE:
        return f"{percent(bad, len(records))} unparsed or failed"
    labels = {r.label for r in records}
    # A constant answer that is every item's gold (a minimal pair's "good" sentence preferred each
    # time) is a result; one that the golds do not share measures a constant answer.
    if len(records) > 1 and len(labels) == 1 and {r.gold for r in records} != labels:
        return f"one label ({next(iter(labels))}) for every item"
    return None


def counts_reason(metrics: Mapping[str, Any]) -> str | None:
    """The rule from a condition's counts alone (``n``, ``n_unparsed``, ``n_errors``), where only
    metrics are at hand (figures drawn from result rows): the unparsed-or-failed half of
    :func:`degenerate_reason` (a constant answer needs the records to be seen).
    """
    n = int(metrics.get("n", 0) or 0)
    bad = int(metrics.get("n_unparsed", 0) or 0) + int(metrics.get("n_errors", 0) or 0)
    return f"{percent(bad, n)} unparsed or failed" if n and bad / n >= DEGENERATE_SHARE else None


def reasons(records: Sequence[ItemRecord]) -> dict[str, str]:
    """Condition → why it is not interpretable, for every such condition among ``records`` (all
    of each condition's records, failed ones included, as the report counts them).
    """
    by: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        by[r.condition].append(r)
    return {c: reason for c, rs in by.items() if (reason := degenerate_reason(rs)) is not None}


def note(flags: Mapping[str, str]) -> str:
    """The line a Markdown table opens with when some of its conditions are not interpretable
    (``flags``: a condition, or ``model · condition``, → why); empty when none is.
    """
    if not flags:
        return ""
    return ("**Not interpretable** (at least half unparsed or failed, or one label for every item: the row "
            "measures the parser or a constant answer, not the model): "
            + "; ".join(f"{c}: {why}" for c, why in flags.items()) + "\n\n")
