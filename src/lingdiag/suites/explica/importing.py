"""Scores computed elsewhere (one row per ordered pair and connective) turned into records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.records import (
    Item,
    ItemRecord,
)
from lingdiag.suites.explica import data


@dataclass(frozen=True)
class ImportResult:
    """Records built from an outside score file, and what could not be used."""

    records: list[ItemRecord]
    unmatched: list[dict[str, Any]]
    """Rows whose sentence pair or connective is not in the dataset: line, reason, text."""
    incomplete: list[str]
    """Item ids that lack a score for some connective (left out of the metrics)."""


def _norm(text: str) -> str:
    return " ".join(text.split())


def _records(items: Sequence[Item], scores: Mapping[str, Mapping[str, float]],
             lower_is_better: bool) -> tuple[list[ItemRecord], list[str]]:
    """Records of the items scored for every connective, and the ids of those scored for only some."""
    records, incomplete = [], []
    for it in items:
        got = scores.get(it.id)
        if not got:
            continue
        if len(got) < len(data.CONNECTIVES):
            incomplete.append(it.id)
            continue
        label = data.best(got, lower_is_better=lower_is_better)
        records.append(ItemRecord(
            condition="imported", axes={"task": "imported"}, item_id=it.id, tags=dict(it.tags),
            fields=dict(it.fields), prompts=[], outputs=[], label=label,
            detail={"scores": dict(got), "lower_is_better": lower_is_better}, gold=it.gold,
            correct=None if it.gold is None else label == it.gold))
    return records, incomplete


def import_scores(
    path: Path,
    items: Sequence[Item],
    *,
    connective_col: str = "connective",
    score_col: str = "score",
    lower_is_better: bool = False,
) -> ImportResult:
    """Match a long-format score file (one row per ordered pair and connective) to ``items``.

    Args:
        path: CSV or TSV with ``Sentence_A``, ``Sentence_B``, a connective and a score column.
        items: The dataset the scores refer to.
        connective_col: Column holding so/because/then/after.
        score_col: Column holding the numeric score.
        lower_is_better: Lowest score wins (perplexity, surprisal); else highest (rating, log-prob).

    Returns:
        Records shaped like a run's, plus the unmatched rows and incomplete items.
    """
    columns, rows = data.read_table(path)
    for col in ("Sentence_A", "Sentence_B", connective_col, score_col):
        if col not in columns:
            raise DatasetError(f"missing column (columns: {', '.join(columns)})", path=path, field=col)
    by_text = {(_norm(it.fields["sentence_a"]), _norm(it.fields["sentence_b"])): it for it in items}
    scores: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    unmatched = []
    for n, row in enumerate(rows, 2):
        item = by_text.get((_norm(row["Sentence_A"]), _norm(row["Sentence_B"])))
        connective = row[connective_col].strip().lower()
        if item is None or connective not in data.CONNECTIVES:
            reason = "sentence pair not in the dataset" if item is None else f"unknown connective {connective!r}"
            unmatched.append({"line": n, "reason": reason, "Sentence_A": row["Sentence_A"],
                              "Sentence_B": row["Sentence_B"], "connective": row[connective_col]})
            continue
        try:
            value = float(row[score_col])
        except ValueError:
            raise DatasetError(f"expected a number, found {row[score_col]!r}", path=path, row=n,
                               field=score_col) from None
        if (item.id, connective) in seen:
            raise DatasetError(f"duplicate score for item {item.id} / {connective!r} (first on row "
                               f"{seen[(item.id, connective)]})", path=path, row=n, field=connective_col)
        seen[(item.id, connective)] = n
        scores.setdefault(item.id, {})[connective] = value
    records, incomplete = _records(items, scores, lower_is_better)
    return ImportResult(records, unmatched, incomplete)
