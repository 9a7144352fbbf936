"""Human judgments beside an item's gold: each label's mean rating where the suite's items carry them
(ExpliCa's ``human`` field, a dataset written by ``lingdiag human import``) or a file of mean
ratings (``--human FILE``: ``id`` and ``mean_<label>`` columns, the generic layout ``lingdiag human
import`` writes).

An item's gold **agrees** with the humans when no other label has a higher mean rating, **ties**
when another label has the same, and **disagrees** when another has a higher one; the margin is the
gold's mean minus the best other label's (negative: the humans prefer another label).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.limits import Limit, read_regular
from lingdiag.io.tabular import decimal, read_table
from lingdiag.reading.item_table import ItemTable

MEAN = "mean_"
HUMAN_FILE_BYTES = Limit("LINGDIAG_HUMAN_FILE_MAX_BYTES", 256 * 2**20, "bytes of a human ratings file")


@dataclass(frozen=True, slots=True)
class Human:
    """The humans' view of one item's gold."""

    verdict: str
    """``agrees``, ``ties`` or ``disagrees``."""
    margin: float
    """The gold's mean rating minus the best other label's."""
    preferred: str
    """The gold label where the humans agree; else the other label rated highest (first listed among equals)."""


def agreement(gold: str, means: Mapping[str, float]) -> Human | None:
    """How ``means`` (label → mean rating) stand to ``gold``; None where gold has no rating or there
    is no other label.
    """
    if gold not in means or len(means) < 2:
        return None
    best_other = max(v for k, v in means.items() if k != gold)
    margin = means[gold] - best_other
    verdict = "agrees" if margin > 0 else "ties" if margin == 0 else "disagrees"
    top = max(v for k, v in means.items() if k != gold)
    other = next(k for k, v in means.items() if k != gold and v == top)
    return Human(verdict, margin, gold if margin > 0 else other)


def from_tables(tables: Iterable[ItemTable]) -> tuple[dict[tuple[str, str], dict[str, float]], list[str]]:
    """(suite, item id) → label → mean rating, from the items' human ratings as their records carry them
    (the runs' item tables: ``lingdiag.reading.item_table``); and a note per item whose ratings are not all
    finite numbers (left without human agreement).
    """
    out: dict[tuple[str, str], dict[str, float]] = {}
    bad: dict[tuple[str, str], str] = {}
    for t in tables:
        for item, values in zip(t.ids, t.human, strict=True):
            key = (t.suite_title, item)
            if values is None or key in out or key in bad:
                continue
            if all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                   for v in values.values()):
                out[key] = {k: float(v) for k, v in values.items()}
            else:
                bad[key] = f"{t.suite_title}, item {item}: a human rating is not a finite number; no human agreement"
    return out, list(bad.values())


def from_file(path: Path) -> dict[str, dict[str, float]]:
    """Item id → label → mean rating from ``path`` (``id`` and ``mean_<label>`` columns).

    Raises:
        DatasetError: no ``id`` or ``mean_`` column, a rating that is not a finite number, or an item
            listed twice; one line naming the file, row and field.
    """
    read_regular(path, HUMAN_FILE_BYTES)  # a FIFO or a link to /dev/zero is refused before it is read
    columns, rows = read_table(path)
    labels = [c for c in columns if c.startswith(MEAN) and len(c) > len(MEAN)]
    if "id" not in columns or not labels:
        raise DatasetError("expected an 'id' column and mean_<label> columns (as `lingdiag human import` "
                           f"writes); got {', '.join(columns[:8])}", path=path)
    out: dict[str, dict[str, float]] = {}
    for n, row in enumerate(rows, 2):
        item = row["id"].strip()
        if item in out:
            raise DatasetError(f"item {item!r} is listed twice", path=path, row=n, field="id")
        means = {}
        for c in labels:
            value = decimal(row[c])
            if value is None:
                raise DatasetError(f"{row[c]!r} is not a finite number", path=path, row=n, field=c)
            means[c[len(MEAN):]] = value
        out[item] = means
    return out
