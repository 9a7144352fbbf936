"""Label answers produced elsewhere (another harness, the authors' outputs, a human annotator)
turned into records, so that a suite's own metrics score them exactly as a run's answers.

A file holds one row per item: an id column naming the dataset item and an answer column, raw
text or a bare label, read by the suite's own answer parser (``Suite.parse_answer``). CSV, TSV
(the delimiter read from the header), JSON lines or a JSON list of objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_json, read_jsonl, read_table
from lingdiag.records import Item, ItemRecord, Prediction

IMPORTED = "imported"
"""The condition name of imported answers."""


@dataclass(frozen=True)
class LabelImport:
    """Records built from an outside answer file, and what could not be used."""

    records: list[ItemRecord]
    unmatched: list[dict[str, Any]]
    """Rows whose id is not in the dataset: row and id."""
    missing: int
    """Dataset items with no row (left out of the metrics)."""
    repeated: int
    """Rows after the first for the same id (not used)."""


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of a CSV/TSV/JSON-lines/JSON file, every value as text."""
    if path.suffix == ".json":
        return _json_rows(read_json(path), path)
    if path.suffix == ".jsonl":
        return _json_rows([row for _, row in read_jsonl(path)], path)
    return read_table(path)


def _json_rows(loaded: Any, path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not isinstance(loaded, list) or not all(isinstance(r, dict) for r in loaded):
        raise DatasetError("expected a list of objects (or one object per line)", path=path)
    rows = [{str(k): "" if v is None else str(v) for k, v in r.items()} for r in loaded]
    return list(dict.fromkeys(k for r in rows for k in r)), rows


def import_labels(path: Path, items: Sequence[Item], *, score_col: str, parse: Callable[[str], Prediction],
                  id_col: str = "id") -> LabelImport:
    """Match an answer file to ``items`` by id and parse each answer into a label.

    Args:
        path: The answer file.
        items: The dataset the answers refer to.
        score_col: Column holding the answer (raw text or a label).
        parse: The suite's answer parser (text → a label or ``UNPARSED``, with the rule or the reason).
        id_col: Column holding the dataset item id.

    Returns:
        One record per answered item (condition ``imported``), in dataset order.
    """
    columns, rows = read_rows(path)
    for col in (id_col, score_col):
        if col not in columns:
            raise DatasetError(f"missing column (columns: {', '.join(columns)})", path=path, field=col)
    by_id = {it.id: it for it in items}
    answers: dict[str, str] = {}
    unmatched, repeated = [], 0
    for n, row in enumerate(rows, 2):
        key = row[id_col].strip()
        if key not in by_id:
            unmatched.append({"row": n, "id": key})
        elif key in answers:
            repeated += 1
        else:
            answers[key] = row[score_col]
    records = []
    for it in items:
        if it.id not in answers:
            continue
        pred = parse(answers[it.id])
        label = pred.label
        records.append(ItemRecord(
            condition=IMPORTED, axes={"source": IMPORTED, "answers": path.name}, item_id=it.id, tags=dict(it.tags),
            fields=dict(it.fields), prompts=[], outputs=[], label=label,
            detail={"answer": answers[it.id], **pred.detail}, gold=it.gold,
            correct=None if it.gold is None else label == it.gold))
    return LabelImport(records, unmatched, len(items) - len(records), repeated)
