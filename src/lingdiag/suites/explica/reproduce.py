"""Re-score the authors' published per-item outputs and set every cell beside the published one
(Tables 6, 7, 8, 10, 11, 13, 14 of the ExpliCa paper; values in ``published.yaml``).

A cell is equal when our value rounds to the published two decimals (|ours − published| ≤ 0.005).
One cell family is known to differ: Falcon's zero-shot greedy cloze (Table 6 All 0.25; the
published file gives 0.22). The published cells match an older cleaned file of the authors, not
the one they released (../shared/notes/fidelity.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import DatasetError
from lingdiag.io.markdown import markdown_table
from lingdiag.io.tabular import read_text, sniff_delimiter
from lingdiag.records import Item
from lingdiag.suites.explica import data
from lingdiag.suites.explica.importing import ImportResult, ScoreColumns, Task, import_scores
from lingdiag.suites.explica.metrics import ExplicaScores, metrics

TOLERANCE = 0.005
CLASS_CELLS = ("All", *data.CLASSES)
BIN_CELLS = ("Overall", *data.FREQUENCY_BINS.values())
SPEARMAN_CELLS = (*data.CLASSES, data.UNRELATED, "all")
# Cleaned greedy answers (Table 6) and the Outlines answers (Table 7) of each prompting file.
DECODING_COLUMNS = {"greedy": "answer_greedy_cleaned", "outlines": "generated_answer_outlines"}
# The authors' names: accept_res_outlines_<model>[_few|_zero]_cleaned.tsv, accept_few_<model>_cleaned.tsv
# (Qwen 14B/32B), perplexity/[perplexity_]<model>.csv|tsv; uncleaned files have no cleaned answers.
_FILE = re.compile(r"^(?:accept|cloze|mult_choice)_(?:res_outlines_|few_|zero_)?(?P<model>.+?)(?:_few|_zero)?"
                   r"_cleaned\.(?:tsv|csv)$")
_TASK_DIRS: dict[str, Task] = {"acceptability": "rating", "cloze": "cloze", "mc": "mc"}


@dataclass(frozen=True, slots=True)
class Cell:
    """One published cell and ours."""

    table: str
    row: str
    column: str
    ours: float
    published: float

    @property
    def equal(self) -> bool:
        """Ours rounds to the published value."""
        return abs(self.ours - self.published) <= TOLERANCE + 1e-9


@dataclass(frozen=True, slots=True)
class Scored:
    """The metrics of one published file under one decoding."""

    task: Task
    shots: str
    """``few``, ``zero`` or ``-`` (perplexity)."""
    decoding: str
    model: str
    metrics: ExplicaScores


@cache
def published() -> dict[str, Any]:
    """The transcribed published values."""
    loaded: dict[str, Any] = yaml.safe_load(files("lingdiag.suites.explica").joinpath("published.yaml").read_text())
    return loaded


def _complete(path: Path, result: ImportResult, items: Sequence[Item], field: str) -> ExplicaScores:
    """The metrics of a published file that scores every item; else a one-line ``DatasetError``.

    Every released file scores all the dataset's pairs, so a file that does not was cut short,
    emptied or edited, and scoring it would change the cells without a word.
    """
    if result.unmatched:
        u = result.unmatched[0]
        raise DatasetError(f"{u['reason']}: {u['Sentence_A']!r} / {u['Sentence_B']!r} (a published file holds "
                           "only the dataset's pairs; torn or edited?)", path=path, row=u["row"])
    if result.incomplete:
        raise DatasetError(f"item {result.incomplete[0]} lacks a score for some connective ({len(result.incomplete)} "
                           "items do; cut short?)", path=path, field=field)
    if len(result.records) < len(items):
        raise DatasetError(f"scores {len(result.records)} of the {len(items)} items of the dataset; a published "
                           "file scores them all (cut short or emptied?)", path=path, field=field)
    return metrics(result.records)


def _prompting(path: Path, task: Task, items: Sequence[Item]) -> list[Scored]:
    m = _FILE.match(path.name)
    if m is None:
        raise DatasetError("not a published file name (accept|cloze|mult_choice_..._<model>_cleaned.tsv)", path=path)
    shots = "few" if path.parent.name == "fewshot" else "zero"
    header = read_text(path).split("\n", 1)[0].rstrip("\r")
    columns = header.split(sniff_delimiter(header))
    found = {decoding: col for decoding, col in DECODING_COLUMNS.items() if col in columns}
    if not found:
        raise DatasetError(f"no answer column (expected {' or '.join(DECODING_COLUMNS.values())}; "
                           f"columns: {', '.join(columns)})", path=path, row=1)
    out = []
    for decoding, col in found.items():
        result = import_scores(path, items, ScoreColumns(task, col, connective_col="conn_in_list"))
        out.append(Scored(task, shots, decoding, m["model"], _complete(path, result, items, col)))
    return out


def score_all(results_dir: Path, items: Sequence[Item]) -> list[Scored]:
    """Score every published file under ``results_dir`` (the layout of ``lingdiag data fetch explica --results``).

    Raises:
        DatasetError: a file is unreadable, lacks its answer column, or does not score every item.
    """
    scored: list[Scored] = []
    for sub, task in _TASK_DIRS.items():
        for path in sorted((results_dir / sub).glob("*/*_cleaned.*")):
            scored += _prompting(path, task, items)
    for path in sorted((results_dir / "perplexity").glob("*.[ct]sv")):
        result = import_scores(path, items, ScoreColumns("perplexity", "perplexity", connective_col="conn_in_list"))
        scored.append(Scored("perplexity", "-", "-", path.stem.removeprefix("perplexity_"),
                             _complete(path, result, items, "perplexity")))
    return scored


def _classes(m: ExplicaScores) -> list[float]:
    return [m["accuracy"], *(m["by_class"][c] for c in data.CLASSES)]


def _bins(m: ExplicaScores) -> list[float]:
    bins = m.get("by_frequency_bin", {})
    return [m["accuracy"], *(bins.get(b, math.nan) for b in data.FREQUENCY_BINS.values())]


def _cells(table: str, row: str, columns: Sequence[str], ours: Sequence[float],
           pub: Sequence[float | None]) -> list[Cell]:
    return [Cell(table, row, c, o, p) for c, o, p in zip(columns, ours, pub, strict=True) if p is not None]


def compare(scored: Sequence[Scored]) -> list[Cell]:
    """Every published cell that a scored file covers, with our value beside it."""
    pub = published()
    cells: list[Cell] = []
    for s in scored:
        if s.task == "perplexity":
            for table in ("table8", "table14"):
                block = pub[table] if table == "table8" else pub[table]["perplexity"]
                if s.model in block:
                    cells += _cells(table, f"APS {s.model}", CLASS_CELLS, _classes(s.metrics), block[s.model])
            for table in ("table10", "table11"):
                if s.model in pub[table]["perplexity"]:
                    cells += _cells(table, f"APS {s.model}", BIN_CELLS, _bins(s.metrics),
                                    pub[table]["perplexity"][s.model])
            continue
        table = "table6" if s.decoding == "greedy" else "table7"
        row = f"{s.task} {s.shots}-shot {s.model}"
        if s.model in pub[table][s.task][s.shots]:
            cells += _cells(table, row, CLASS_CELLS, _classes(s.metrics), pub[table][s.task][s.shots][s.model])
        if s.task == "rating" and s.shots == "zero":
            rho = s.metrics["spearman"]
            if s.model in pub["table13"][s.decoding]:
                cells += _cells("table13", f"ρ {s.decoding} {s.model}", SPEARMAN_CELLS,
                                [rho[g]["rho"] for g in SPEARMAN_CELLS], pub["table13"][s.decoding][s.model])
            if s.decoding == "greedy" and s.model in pub["table10"]["rating"]:
                cells += _cells("table10", f"rating {s.model}", BIN_CELLS, _bins(s.metrics),
                                pub["table10"]["rating"][s.model])
        if s.task == "rating" and s.shots == "few" and s.decoding == "greedy":
            for table in ("table11", "table14"):
                if s.model in pub[table]["rating"]:
                    columns = BIN_CELLS if table == "table11" else CLASS_CELLS
                    values = _bins(s.metrics) if table == "table11" else _classes(s.metrics)
                    cells += _cells(table, f"rating {s.model}", columns, values, pub[table]["rating"][s.model])
    return cells


def markdown(cells: Sequence[Cell]) -> str:
    """One table per paper table: each row's cells as ``ours (published)``, differences in bold."""
    out = []
    for table in dict.fromkeys(c.table for c in cells):
        mine = [c for c in cells if c.table == table]
        columns = list(dict.fromkeys(c.column for c in mine))
        out.append(f"## {table.replace('table', 'Table ')}: ours (published); **bold** differs by more than "
                   f"{TOLERANCE}\n")
        by_row: dict[str, dict[str, Cell]] = {}
        for c in mine:
            by_row.setdefault(c.row, {})[c.column] = c
        out.append(markdown_table(["row", *columns], [[row, *(_fmt(by_col.get(col)) for col in columns)]
                                                     for row, by_col in by_row.items()]))
    return "\n".join(out)


def _fmt(c: Cell | None) -> str:
    if c is None:
        return ""
    text = f"{c.ours:.2f} ({c.published:.2f})"
    return text if c.equal else f"**{text}**"


def summary(cells: Sequence[Cell]) -> str:
    """The one-line count."""
    equal = sum(c.equal for c in cells)
    return f"cells: {equal} equal, {len(cells) - equal} differ (of {len(cells)} published cells with files)"
