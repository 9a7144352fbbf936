"""The items pages' difficulty and discrimination columns, from the item model saved for the run
(``lingdiag items fit … --out STUDY/items``: :func:`lingdiag.items.section.run_params`): sorted by
either, filtered by a range of either, or to the flagged items only. Without a saved fit the page
is as it was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from lingdiag.items.section import ItemParams
from lingdiag.records import ItemRecord

SORTS = ("difficulty", "-difficulty", "discrimination", "-discrimination")
"""What an items page sorts by (``-``: highest first)."""
_BOUNDS = ("min_difficulty", "max_difficulty", "min_discrimination", "max_discrimination")

Params = Mapping[tuple[str, str], ItemParams]


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True, slots=True)
class ItemOrder:
    """An items page's sort and ranges over the item model's numbers."""

    sort: str = ""
    min_difficulty: float | None = None
    max_difficulty: float | None = None
    min_discrimination: float | None = None
    max_discrimination: float | None = None
    flagged: bool = False

    @classmethod
    def of(cls, query: Mapping[str, str]) -> ItemOrder:
        """From a page's query string (an unknown sort or a bound that is no number is ignored)."""
        sort = query.get("sort", "")
        low_b, high_b, low_a, high_a = (_number(query.get(b, "")[:40]) for b in _BOUNDS)
        return cls(sort if sort in SORTS else "", low_b, high_b, low_a, high_a, query.get("flagged", "") == "1")

    def query(self) -> dict[str, str]:
        """What is set, for links."""
        out = {b: f"{getattr(self, b):g}" for b in _BOUNDS if getattr(self, b) is not None}
        return {**({"sort": self.sort} if self.sort else {}), **out, **({"flagged": "1"} if self.flagged else {})}

    def active(self) -> bool:
        """Whether the page sorts or filters by the item model."""
        return bool(self.query())

    def keeps(self, p: ItemParams | None) -> bool:
        """Whether an item with numbers ``p`` (None: not in the fit) passes the ranges."""
        if p is None:
            return not (self.flagged or any(getattr(self, b) is not None for b in _BOUNDS))
        if self.flagged and not p.flagged:
            return False
        for value, low, high in ((p.difficulty, self.min_difficulty, self.max_difficulty),
                                 (p.discrimination, self.min_discrimination, self.max_discrimination)):
            if (low is not None or high is not None) and not math.isfinite(value):
                return False
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        return True

    def arrange(self, found: Iterable[tuple[int, ItemRecord]], params: Params) -> list[tuple[int, ItemRecord]]:
        """``found`` kept by the ranges and sorted (items without the number last)."""
        kept = [(k, r) for k, r in found if self.keeps(params.get((r.condition, r.item_id)))]
        if not self.sort:
            return kept
        name = self.sort.lstrip("-")
        sign = -1.0 if self.sort.startswith("-") else 1.0

        def key(x: tuple[int, ItemRecord]) -> tuple[bool, float, int]:
            p = params.get((x[1].condition, x[1].item_id))
            value = getattr(p, name) if p else math.nan
            return (not math.isfinite(value), sign * value if math.isfinite(value) else 0.0, x[0])
        return sorted(kept, key=key)


def header() -> str:
    """The two column heads."""
    return "<th>Difficulty</th><th>Discrimination</th>"


def cells(r: ItemRecord, params: Params) -> str:
    """The record's item's two numbers (— where the fit has none), a flagged item marked."""
    p = params.get((r.condition, r.item_id))
    shown = [f"{v:.2f}" if p is not None and math.isfinite(v) else "—"
             for v in ((p.difficulty, p.discrimination) if p else (math.nan, math.nan))]
    mark = ' class="irt-flagged" title="flagged in items.csv"' if p is not None and p.flagged else ""
    return f'<td data-irt="difficulty">{shown[0]}</td><td data-irt="discrimination"{mark}>{shown[1]}</td>'


def controls(run_id: str, order: ItemOrder, kept: Mapping[str, str]) -> str:
    """A form to sort and filter by the two numbers (the page's other filters kept as hidden fields)."""
    hidden = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in
                     {"id": run_id, **kept}.items())
    options = "".join(f'<option value="{s}"{" selected" if s == order.sort else ""}>{s.replace("-", "highest ")}'
                      "</option>" for s in SORTS)
    bounds = "".join(f'<label>{escape(b.replace("_", " "))} <input name="{b}" size="5" value="'
                     f'{escape(order.query().get(b, ""))}"></label> ' for b in _BOUNDS)
    flagged = f'<label><input type="checkbox" name="flagged" value="1"{" checked" if order.flagged else ""}> ' \
              "flagged only</label> "
    return (f'<form class="filters" id="irt" method="get" action="/items">{hidden}<label>Sort by <select '
            f'name="sort"><option value="">line</option>{options}</select></label> {bounds}{flagged}'
            '<button type="submit">apply</button></form>')


def page(found: Sequence[tuple[int, ItemRecord]], start: int, size: int) -> tuple[list[tuple[int, ItemRecord]],
                                                                                   int | None]:
    """One page of arranged records and where the next begins."""
    chosen = list(found[start:start + size])
    return chosen, start + size if start + size < len(found) else None
