"""Item counts for ``lingdiag data stats``."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.records import Item


def counts(items: Sequence[Item], tags: Sequence[str]) -> dict[str, Any]:
    """Items per value of each tag, split by gold label.

    Returns:
        ``{"n": N, "labels": [...], "by": {tag: {value: {"n": k, "gold": {label: k}}}}}``
    """
    labels = sorted({str(it.gold) for it in items})
    by: dict[str, dict[str, Any]] = {}
    for tag in ("gold", *tags):
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for it in items:
            value = str(it.gold) if tag == "gold" else str(it.tags.get(tag))
            table[value][str(it.gold)] += 1
        by[tag] = {v: {"n": sum(c.values()), "gold": dict(c)} for v, c in sorted(table.items())}
    return {"n": len(items), "labels": labels, "by": by}
