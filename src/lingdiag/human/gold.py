"""Gold labels from mean ratings, by a named rule, and the dataset file written from them.

A rule sees one item's mean rating per variant. ``explica`` is ExpliCa's (§3.2, App. B): an
item whose best variant has a mean below 6 and whose variants average below 5 is
``unrelated``, otherwise its label is the best-rated variant. ``argmax`` always takes the
best-rated variant. ``threshold`` is the same shape with the user's numbers
(``--max-below``, ``--mean-below``, ``--label``). Ties go to the variant listed first in the
study (the item's own order of variants).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.records import Item
from lingdiag.registry import Registry
from lingdiag.suite import ItemView
from lingdiag.tabular import write_csv


@dataclass(frozen=True, slots=True)
class GoldRule:
    """A named way from an item's mean rating per variant to its gold label."""

    name: str
    description: str
    label: Callable[[Mapping[str, float]], str]


def _best(means: Mapping[str, float]) -> str:
    top = max(means.values())
    return next(v for v, m in means.items() if m == top)


def threshold_rule(max_below: float, mean_below: float, label: str = "unrelated",
                   name: str = "threshold") -> GoldRule:
    """``label`` when the best mean is below ``max_below`` and the mean of means below ``mean_below``;
    otherwise the best-rated variant.
    """

    def apply(means: Mapping[str, float]) -> str:
        values = list(means.values())
        if max(values) < max_below and sum(values) / len(values) < mean_below:
            return label
        return _best(means)

    return GoldRule(name, f"{label} if max < {max_below:g} and mean < {mean_below:g}, else the best variant", apply)


GOLD_RULES: Registry[GoldRule] = Registry("gold rule")
GOLD_RULES.register("explica")(threshold_rule(6.0, 5.0, "unrelated", "explica"))
GOLD_RULES.register("argmax")(GoldRule("argmax", "the best-rated variant", _best))


def gold_rule(name: str, max_below: float | None = None, mean_below: float | None = None,
              label: str = "unrelated") -> GoldRule:
    """The registered rule ``name``, or ``threshold`` built from the given numbers."""
    if name == "threshold":
        if max_below is None or mean_below is None:
            raise ConfigError("--gold threshold needs --max-below and --mean-below")
        return threshold_rule(max_below, mean_below, label)
    return GOLD_RULES.get(name)


@dataclass(frozen=True, slots=True)
class ItemGold:
    """One item's mean ratings and the gold label they give."""

    item_id: str
    means: Mapping[str, float]
    """Variant → mean rating, in the study's variant order."""
    n: Mapping[str, int]
    """Variant → ratings averaged."""
    label: str


def derive(items: Sequence[Item], variants: Mapping[str, Sequence[str]],
           ratings: Mapping[tuple[str, str], Sequence[float]], rule: GoldRule) -> tuple[list[ItemGold], list[str]]:
    """Gold of every item whose variants were all rated; also the ids of items left out.

    Args:
        items: The study's items.
        variants: Item id → its variants in study order.
        ratings: (item id, variant) → the kept ratings.
        rule: The gold rule.
    """
    golds, missing = [], []
    for it in items:
        vs = variants.get(it.id, ())
        got = {v: ratings.get((it.id, v), ()) for v in vs}
        if not vs or any(not r for r in got.values()):
            missing.append(it.id)
            continue
        means = {v: sum(r) / len(r) for v, r in got.items()}
        golds.append(ItemGold(it.id, means, {v: len(r) for v, r in got.items()}, rule.label(means)))
    return golds, missing


def write_dataset(items: Sequence[Item], view: ItemView, golds: Sequence[ItemGold], rule: GoldRule,
                  path: Path) -> int:
    """The rated items as a data file: the suite's own layout where it has one (ExpliCa's
    official columns, so ``--dataset FILE`` loads it), else one generic row per item; both end
    with ``gold`` and ``gold_rule``.
    """
    by_id = {it.id: it for it in items}
    rows = []
    for g in golds:
        it = by_id[g.item_id]
        if view.layout is not None:
            lay = view.layout
            row = {**{col: str(it.tags.get(tag, "")) for col, tag in lay.tags.items()},
                   lay.halves[0]: str(it.fields[view.halves[0]]), lay.halves[1]: str(it.fields[view.halves[1]]),
                   **{lay.ratings[v]: repr(m) for v, m in g.means.items()}}
        else:
            row = {"id": it.id, view.halves[0]: str(it.fields[view.halves[0]]),
                   view.halves[1]: str(it.fields[view.halves[1]]),
                   **{f"mean_{v}": repr(m) for v, m in g.means.items()}}
        rows.append({**row, "gold": g.label, "gold_rule": rule.name})
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return write_csv(path, columns, [[r.get(c, "") for c in columns] for r in rows])
