"""What a reader needs to see an item beside its numbers: the dataset's text fields as the records
carry them and the gold label, one per (suite, item id), from the runs' item tables
(``lingdiag.reading.item_table``: kept in each run's summary); and the refusal of runs over two versions
of one dataset (the same item ids with other gold labels), which would be fitted as one matrix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lingdiag.errors import RunError
from lingdiag.reading.item_table import ItemTable


class DataVersions(RunError):
    """Runs read together disagree on an item's gold label: two versions of one dataset."""


@dataclass(frozen=True, slots=True)
class ItemText:
    """One item as a reader sees it."""

    text: str
    """The record's text fields, ``name: value`` joined by `` | `` (empty where it has none;
    ``lingdiag.reading.item_table.text_of``)."""
    gold: str | None
    family: str = ""
    """The item's family as its suite groups items (``tag=value`` of the suite's first ``stat_tags``: BLiMP's
    paradigm, ExpliCa's relation...); empty where the suite names none (the item's cell is its family)."""


def _versions(table: ItemTable, item: str, gold: str, seen: str | None, source: str) -> DataVersions:
    return DataVersions(f"{table.path}: item {item!r} of {table.suite_title} has gold {gold!r}, but {seen!r} in "
                        f"{source}: two versions of the dataset; fit each version's runs apart (one `lingdiag "
                        "items fit` each)")


def item_texts(tables: Iterable[ItemTable]) -> dict[tuple[str, str], ItemText]:
    """(suite, item id) → its text and gold, from the first run's item table that has it.

    Raises:
        DataVersions: two runs (or two records of one run) hold different gold labels for one item (one line
            naming both runs).
    """
    out: dict[tuple[str, str], ItemText] = {}
    source: dict[tuple[str, str], str] = {}
    for t in tables:
        for k, item in enumerate(t.ids):
            key, gold = (t.suite_title, item), t.gold[k]
            seen = out.get(key)
            if seen is None:
                out[key] = ItemText(t.text[k], gold, t.family[k])
                source[key] = str(t.path)
            elif gold is not None and seen.gold is not None and gold != seen.gold:
                raise _versions(t, item, gold, seen.gold, source[key])
            elif seen.gold is None and gold is not None:
                out[key] = ItemText(seen.text, gold, seen.family)
            other = t.other_gold[k]
            if other is not None:  # another record of this run gives another gold
                raise _versions(t, item, other, out[key].gold, source[key])
    return out
