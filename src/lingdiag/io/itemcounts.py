"""Item counts for ``lingdiag data stats``."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.records import Item


@dataclass(frozen=True, slots=True)
class ValueCount:
    """The items holding one value of one tag."""

    n: int
    gold: Mapping[str, int]
    """Gold label → items."""


@dataclass(frozen=True, slots=True)
class ItemCounts:
    """Items per value of each tag, split by gold label."""

    n: int
    labels: tuple[str, ...]
    """Every gold label present, sorted (``None`` for items without one)."""
    by: Mapping[str, Mapping[str, ValueCount]]
    """Tag (``gold`` first) → value → its count."""

    def to_json(self) -> dict[str, Any]:
        """``{"n": N, "labels": [...], "by": {tag: {value: {"n": k, "gold": {label: k}}}}}`` (``--json``)."""
        return {"n": self.n, "labels": list(self.labels),
                "by": {tag: {v: {"n": c.n, "gold": dict(c.gold)} for v, c in values.items()}
                       for tag, values in self.by.items()}}


def counts(items: Sequence[Item], tags: Sequence[str]) -> ItemCounts:
    """Items per value of ``gold`` and of each of ``tags``, split by gold label."""
    by: dict[str, dict[str, ValueCount]] = {}
    for tag in ("gold", *tags):
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for it in items:
            value = str(it.gold) if tag == "gold" else str(it.tags.get(tag))
            table[value][str(it.gold)] += 1
        by[tag] = {v: ValueCount(sum(c.values()), dict(c)) for v, c in sorted(table.items())}
    return ItemCounts(len(items), tuple(sorted({str(it.gold) for it in items})), by)
