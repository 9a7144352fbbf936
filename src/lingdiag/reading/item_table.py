"""What a reader sees of each item of a run beside its numbers, one row per item (not per record): its
text as the records carry it, its gold label, its family and its human ratings, in the order the
run's records first name the items.

A run's summary keeps this table (``lingdiag.rundir.summary``), so that the study report's Items
section shows the items' text, gold and human agreement without opening a run's ``items.jsonl``;
``lingdiag items fit`` builds it from the records it reads anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingdiag.reading.run import LoadedRun
from lingdiag.records import ItemRecord

SKIPPED = frozenset({"human"})
"""Record fields that are not the item's text (ExpliCa's human ratings are shown as agreement)."""
TEXT_CHARS = 2000
"""An item's text is cut here in ``items.csv`` (the viewer shows it whole)."""
HUMAN_FIELD = "human"
"""The record field holding an item's human ratings: label → mean rating."""
COLUMNS = ("text", "gold", "family", "human", "other_gold")
"""The table's columns, as a summary stores them (each a list aligned with the run's item vocabulary)."""


def family_of(tags: object, stat_tags: tuple[str, ...]) -> str:
    """``tag=value`` of the first of the suite's ``stat_tags`` the item carries (empty: none)."""
    if not isinstance(tags, dict) or not stat_tags or tags.get(stat_tags[0]) is None:
        return ""
    return f"{stat_tags[0]}={tags[stat_tags[0]]}"


def text_of(fields: dict[str, object] | object) -> str:
    """The string fields of a record, ``name: value`` joined by `` | ``, cut at :data:`TEXT_CHARS`."""
    if not isinstance(fields, dict):
        return ""
    parts = [f"{k}: {v}" for k, v in fields.items() if k not in SKIPPED and isinstance(v, str) and v.strip()]
    text = " | ".join(parts)
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS - 1] + "…"


@dataclass(frozen=True, eq=False)
class ItemTable:
    """One run's items, each once, in the order its records first name them."""

    path: Path
    """The run directory (what an error about its items names)."""
    suite_title: str
    """The suite as the report names it (``LoadedRun.suite_title``)."""
    ids: list[str]
    text: list[str]
    """The first record's text fields (:func:`text_of`)."""
    gold: list[str | None]
    """The first gold label the item's records give (None: none gives one)."""
    family: list[str]
    """The first record's family (:func:`family_of`)."""
    human: list[dict[str, Any] | None]
    """The first non-empty human ratings the item's records carry, as they carry them (None: none)."""
    other_gold: list[str | None]
    """A second gold label another record of the item gives (two versions of the dataset in one run)."""


@dataclass
class TableBuilder:
    """An item table as records stream in (``add`` each record with its item's dense code, in line order)."""

    stat_tags: tuple[str, ...]
    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in COLUMNS})

    def add(self, code: int, r: ItemRecord) -> None:
        """Take ``r``, whose item has ``code`` (codes are given in the order items are first seen)."""
        c = self.columns
        given = r.fields.get(HUMAN_FIELD)
        human = {str(k): v for k, v in given.items()} if isinstance(given, Mapping) and given else None
        if code == len(c["text"]):
            c["text"].append(text_of(dict(r.fields)))
            c["gold"].append(r.gold)
            c["family"].append(family_of(dict(r.tags), self.stat_tags))
            c["human"].append(human)
            c["other_gold"].append(None)
            return
        if r.gold is not None:
            seen = c["gold"][code]
            if seen is None:
                c["gold"][code] = r.gold
            elif r.gold != seen and c["other_gold"][code] is None:
                c["other_gold"][code] = r.gold
        if human is not None and c["human"][code] is None:
            c["human"][code] = human

    def table(self, path: Path, suite_title: str, ids: list[str]) -> ItemTable:
        """The table of the items ``ids`` (code → id)."""
        return ItemTable(Path(path), suite_title, list(ids), *(list(self.columns[c]) for c in COLUMNS))


def table_of(path: Path, suite_title: str, stat_tags: tuple[str, ...], records: Iterable[ItemRecord]) -> ItemTable:
    """The item table of a run's ``records`` (in line order)."""
    codes: dict[str, int] = {}
    builder = TableBuilder(stat_tags)
    for r in records:
        builder.add(codes.setdefault(r.item_id, len(codes)), r)
    return builder.table(path, suite_title, list(codes))


def tables_of(runs: Iterable[LoadedRun]) -> list[ItemTable]:
    """The item table of each run read whole (its ``records``)."""
    return [table_of(r.path, r.suite_title, r.suite.stat_tags, r.records) for r in runs]
