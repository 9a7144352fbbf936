"""What a reader needs to see an item beside its numbers: the dataset's text fields as the records
carry them and the gold label, one per (suite, item id); and the refusal of runs over two versions
of one dataset (the same item ids with other gold labels), which would be fitted as one matrix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lingdiag.errors import RunError
from lingdiag.reading import LoadedRun

SKIPPED = frozenset({"human"})
"""Record fields that are not the item's text (ExpliCa's human ratings are shown as agreement)."""
TEXT_CHARS = 2000
"""An item's text is cut here in ``items.csv`` (the viewer shows it whole)."""


class DataVersions(RunError):
    """Runs read together disagree on an item's gold label: two versions of one dataset."""


@dataclass(frozen=True, slots=True)
class ItemText:
    """One item as a reader sees it."""

    text: str
    """The record's text fields, ``name: value`` joined by `` | `` (empty where it has none)."""
    gold: str | None
    family: str = ""
    """The item's family as its suite groups items (``tag=value`` of the suite's first ``stat_tags``: BLiMP's
    paradigm, ExpliCa's relation...); empty where the suite names none (the item's cell is its family)."""


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


def item_texts(runs: Iterable[LoadedRun]) -> dict[tuple[str, str], ItemText]:
    """(suite, item id) → its text and gold, from the first run that has it.

    Raises:
        DataVersions: two runs hold different gold labels for one item (one line naming both runs).
    """
    out: dict[tuple[str, str], ItemText] = {}
    source: dict[tuple[str, str], str] = {}
    for run in runs:
        for r in run.records:
            key = (run.suite_title, r.item_id)
            seen = out.get(key)
            if seen is None:
                out[key] = ItemText(text_of(dict(r.fields)), r.gold, family_of(dict(r.tags), run.suite.stat_tags))
                source[key] = str(run.path)
            elif r.gold is not None and seen.gold is not None and r.gold != seen.gold:
                raise DataVersions(f"{run.path}: item {r.item_id!r} of {run.suite_title} has gold {r.gold!r}, but "
                                   f"{seen.gold!r} in {source[key]}: two versions of the dataset; fit each version's "
                                   "runs apart (one `lingdiag items fit` each)")
            elif seen.gold is None and r.gold is not None:
                out[key] = ItemText(seen.text, r.gold, seen.family)
    return out
