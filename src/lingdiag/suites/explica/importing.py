"""Answers and scores computed elsewhere turned into records, so that they get the same metrics
as a run: the authors' published outputs (``lingdiag reproduce explica``) or anyone's own.

Files are long format, one row per (ordered pair, connective) for rating and perplexity, and
at least one row per ordered pair for cloze and multiple choice. As in the authors' notebooks
(../shared/reference/explica/analysis/greedy_accuracy.py, ``compute_accuracy``), cloze and
multiple-choice files keep the first row of each ordered pair in file order (the authors asked
multiple choice four times per pair, each with its own option shuffle), and an answer that is
not a connective ("error" in their cleaned column) is a miss.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lingdiag.errors import DatasetError
from lingdiag.records import UNPARSED, Item, ItemRecord
from lingdiag.suites.explica import data
from lingdiag.suites.explica.parse import parse_connective, parse_letter, parse_rating
from lingdiag.suites.explica.rules import RatingRule, lowest
from lingdiag.tabular import decimal, read_table

Task = Literal["rating", "cloze", "mc", "perplexity"]
IMPORT_TASKS: tuple[Task, ...] = ("rating", "cloze", "mc", "perplexity")


@dataclass(frozen=True)
class ScoreColumns:
    """Where a file keeps what the task needs, and how a choice is made."""

    task: Task
    score_col: str
    """Rating (a number or an answer text), perplexity, cloze answer or multiple-choice letter."""
    connective_col: str = "connective"
    """Rating / perplexity: the connective of the row."""
    choices_col: str = "answers_dict"
    """Multiple choice: letter → connective, as a Python or JSON dict literal."""
    lower_is_better: bool = True
    """Perplexity task: lowest score wins (perplexity, surprisal); False for log-probabilities."""
    rule: RatingRule = RatingRule()
    """Rating ties and unreadable ratings (the authors' rules by default)."""


@dataclass(frozen=True)
class ImportResult:
    """Records built from an outside file, and what could not be used."""

    records: list[ItemRecord]
    unmatched: list[dict[str, Any]]
    """Rows whose sentence pair or connective is not in the dataset: row, reason, text."""
    incomplete: list[str]
    """Item ids that lack a score for some connective (left out of the metrics)."""
    repeated: int = 0
    """Cloze / multiple-choice rows after the first of their ordered pair (not used)."""


def _norm(text: str) -> str:
    return " ".join(text.split())


def _record(it: Item, task: str, label: str, detail: dict[str, Any], rule: RatingRule | None = None) -> ItemRecord:
    axes = {"task": task, "source": "imported"}
    if rule is not None:
        axes |= {"ties": rule.ties, "missing_ratings": rule.missing}
    return ItemRecord(condition=task, axes=axes, item_id=it.id,
                      tags=dict(it.tags), fields=dict(it.fields), prompts=[], outputs=[], label=label,
                      detail=detail, gold=it.gold, correct=None if it.gold is None else label == it.gold)


def _number(text: str, path: Path, n: int, col: str) -> float:
    value = decimal(text)
    if value is None:  # also NaN, inf, 1_0, full-width digits
        raise DatasetError(f"expected a finite number, found {text!r}", path=path, row=n, field=col)
    return value


def _rating(text: str) -> float:
    """A rating cell: a number as is, an answer text through the rating parser. An empty cell
    (or pandas' ``nan``) is NaN, which pandas' ``idxmax`` in the authors' notebooks skips
    (unlike a -1, which competes). ``inf`` and other non-decimal text go to the parser, which
    reads no rating in them (-1).
    """
    if not text.strip() or text.strip().lower() == "nan":
        return math.nan
    value = decimal(text)
    return float(parse_rating(text)) if value is None else value


def _choices(text: str, path: Path, n: int, col: str) -> dict[str, str]:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise DatasetError(f"expected a dict of letter → connective, found {text[:60]!r}", path=path, row=n,
                           field=col)
    return value


class _Reader:
    """Rows of one file matched to the dataset's ordered pairs."""

    def __init__(self, path: Path, items: Sequence[Item], cols: ScoreColumns) -> None:
        self.path, self.cols = path, cols
        columns, self.rows = read_table(path)
        needed = ["Sentence_A", "Sentence_B", cols.score_col]
        needed += {"rating": [cols.connective_col], "perplexity": [cols.connective_col],
                   "mc": [cols.choices_col], "cloze": []}[cols.task]
        for col in needed:
            if col not in columns:
                raise DatasetError(f"missing column (columns: {', '.join(columns)})", path=path, field=col)
        self.by_text = {(_norm(it.fields["sentence_a"]), _norm(it.fields["sentence_b"])): it for it in items}
        self.unmatched: list[dict[str, Any]] = []

    def matched(self) -> list[tuple[int, Item, Mapping[str, str]]]:
        """(row number, item, row) of the rows whose pair is in the dataset."""
        out: list[tuple[int, Item, Mapping[str, str]]] = []
        for n, row in enumerate(self.rows, 2):
            item = self.by_text.get((_norm(row["Sentence_A"]), _norm(row["Sentence_B"])))
            if item is None:
                self.unmatched.append({"row": n, "reason": "sentence pair not in the dataset",
                                       "Sentence_A": row["Sentence_A"], "Sentence_B": row["Sentence_B"]})
                continue
            out.append((n, item, row))
        return out


def _per_connective(reader: _Reader, items: Sequence[Item]) -> tuple[list[ItemRecord], list[str]]:
    cols, path = reader.cols, reader.path
    scores: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    for n, item, row in reader.matched():
        connective = row[cols.connective_col].strip().lower()
        if connective not in data.CONNECTIVES:
            reader.unmatched.append({"row": n, "reason": f"unknown connective {connective!r}",
                                     "Sentence_A": row["Sentence_A"], "Sentence_B": row["Sentence_B"]})
            continue
        if (item.id, connective) in seen:
            raise DatasetError(f"duplicate score for item {item.id} / {connective!r} (first on row "
                               f"{seen[(item.id, connective)]})", path=path, row=n, field=cols.connective_col)
        seen[(item.id, connective)] = n
        text = row[cols.score_col]
        scores.setdefault(item.id, {})[connective] = (
            _number(text, path, n, cols.score_col) if cols.task == "perplexity" else _rating(text))
    records, incomplete = [], []
    for it in items:
        got = scores.get(it.id)
        if not got:
            continue
        if len(got) < len(data.CONNECTIVES):
            incomplete.append(it.id)
            continue
        if cols.task == "perplexity":
            label = lowest(got) if cols.lower_is_better else data.best(got, order=data.ALPHABETICAL)
            records.append(_record(it, cols.task, label, {"perplexity" if cols.lower_is_better else "scores": got}))
        else:
            label, tied = cols.rule.choose(got)
            records.append(_record(it, cols.task, label, {"ratings": got, "tied": tied}, cols.rule))
    return records, incomplete


def _per_pair(reader: _Reader) -> tuple[list[ItemRecord], int]:
    cols, path = reader.cols, reader.path
    records, done, repeated = [], set(), 0
    for n, item, row in reader.matched():
        if item.id in done:
            repeated += 1
            continue
        done.add(item.id)
        answer = row[cols.score_col]
        if cols.task == "cloze":
            records.append(_record(item, "cloze", parse_connective(answer), {"answer": answer}))
            continue
        options = _choices(row[cols.choices_col], path, n, cols.choices_col)
        letter = parse_letter(answer, options)
        label = options.get(letter, UNPARSED) if letter else UNPARSED
        records.append(_record(item, "mc", label, {"options": options, "letter": letter, "answer": answer}))
    return records, repeated


def import_scores(path: Path, items: Sequence[Item], cols: ScoreColumns) -> ImportResult:
    """Match an outside file to ``items`` and score it the way a run would.

    Args:
        path: CSV or TSV with ``Sentence_A``, ``Sentence_B`` and the columns of ``cols``.
        items: The dataset the file refers to.
        cols: The task, its columns and rules.

    Returns:
        Records shaped like a run's, plus the unmatched rows and incomplete items.
    """
    reader = _Reader(path, items, cols)
    if cols.task in ("rating", "perplexity"):
        records, incomplete = _per_connective(reader, items)
        return ImportResult(records, reader.unmatched, incomplete)
    records, repeated = _per_pair(reader)
    return ImportResult(records, reader.unmatched, [], repeated)
