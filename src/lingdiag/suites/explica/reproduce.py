"""Re-score the authors' published per-item outputs and set every cell beside the published one
(Tables 6, 7, 8, 10, 11, 13, 14 of the ExpliCa paper; values in ``published.yaml``).

A cell is equal when our value rounds to the published two decimals (|ours − published| ≤ 0.005),
and not computable, with its reason, where the files cannot give it (the frequency bins of Tables 10-11
need the bins of explica_freq_4800.tsv: ``--dataset official`` or ``--frequencies``); a cell never
holds NaN or infinity, which would print as a number beside the published one. One cell family is
known to differ: Falcon's zero-shot greedy cloze (Table 6 All 0.25; the published file gives 0.22).
The published cells match an older cleaned file of the authors, not the one they released
(../shared/notes/fidelity.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
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
from lingdiag.records import Item, ItemRecord
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
    """One published cell and ours: a finite number, or ``None`` with the reason it is not computable."""

    table: str
    row: str
    column: str
    ours: float | None
    published: float
    reason: str | None = None
    """Why ``ours`` is ``None``; set exactly when it is."""

    def __post_init__(self) -> None:
        if (self.ours is None) != (self.reason is not None):
            raise ValueError(f"{self.table} {self.row} {self.column}: a cell has a value or a reason, not both")
        if self.ours is not None and not math.isfinite(self.ours):
            raise ValueError(f"{self.table} {self.row} {self.column}: {self.ours} is not a cell value (use a reason)")

    @property
    def computable(self) -> bool:
        """The files give our value."""
        return self.ours is not None

    @property
    def equal(self) -> bool:
        """Ours rounds to the published value (never, where not computable)."""
        return self.ours is not None and abs(self.ours - self.published) <= TOLERANCE + 1e-9


@dataclass(frozen=True, slots=True)
class Scored:
    """The metrics of one published file under one decoding."""

    task: Task
    shots: str
    """``few``, ``zero`` or ``-`` (perplexity)."""
    decoding: str
    model: str
    metrics: ExplicaScores
    bins_missing: str | None = None
    """Why the frequency-bin cells (Tables 10-11) cannot be computed from this file; ``None`` when they can."""


NO_BINS = ("the dataset gives no frequency bins (explica_freq_4800.tsv): use --dataset official or "
           "--frequencies FILE")


def _binned(r: ItemRecord) -> bool:
    # Tables 10-11 count a pair once per connective row, in that row's bin: all four rows or none.
    per_row = r.tags.get("frequency_bins")
    return "frequency_bin" in r.tags or (isinstance(per_row, dict) and set(per_row) == set(data.CONNECTIVES))


def bins_missing(records: Sequence[ItemRecord]) -> str | None:
    """Why per-bin accuracy cannot be set beside Tables 10-11: no bins, or bins for only some pairs
    or some of a pair's connective rows (an accuracy over part of a bin is not the published one);
    ``None`` when every related pair has the bins of its four rows.
    """
    related = [r for r in records if r.gold is not None]
    unbinned = sum(not _binned(r) for r in related)
    if unbinned == len(related):
        return NO_BINS
    if unbinned:
        return (f"{unbinned} of the {len(related)} related pairs lack the frequency bin of some connective row "
                "in the dataset")
    return None


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
        out.append(Scored(task, shots, decoding, m["model"], _complete(path, result, items, col),
                          bins_missing(result.records)))
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
                             _complete(path, result, items, "perplexity"), bins_missing(result.records)))
    return scored


Ours = float | str
"""A value of ours, or the reason it is not computable."""


def _classes(m: ExplicaScores) -> list[Ours]:
    return [m["accuracy"], *(m["by_class"][c] for c in data.CLASSES)]


def _bins(s: Scored) -> list[Ours]:
    if s.bins_missing is not None:
        return [s.metrics["accuracy"], *(s.bins_missing for _ in data.FREQUENCY_BINS)]
    bins = s.metrics.get("by_frequency_bin", {})
    return [s.metrics["accuracy"], *(bins.get(b, f"no related pair in the {b} bin")
                                     for b in data.FREQUENCY_BINS.values())]


def row_cells(table: str, row: str, columns: Sequence[str], ours: Sequence[Ours],
              pub: Sequence[float | None]) -> list[Cell]:
    """The published cells of one row (``None``: not published) beside ours; a value of ours that
    is a reason, NaN or infinite makes a not-computable cell, never a number.
    """
    out = []
    for column, o, p in zip(columns, ours, pub, strict=True):
        if p is None:
            continue
        if isinstance(o, str):
            out.append(Cell(table, row, column, None, p, o))
        elif not math.isfinite(o):
            out.append(Cell(table, row, column, None, p, "undefined on these files (not a finite number)"))
        else:
            out.append(Cell(table, row, column, o, p))
    return out


def compare(scored: Sequence[Scored]) -> list[Cell]:
    """Every published cell that a scored file covers, with our value beside it."""
    pub = published()
    out: list[Cell] = []
    for s in scored:
        if s.task == "perplexity":
            for table in ("table8", "table14"):
                block = pub[table] if table == "table8" else pub[table]["perplexity"]
                if s.model in block:
                    out += row_cells(table, f"APS {s.model}", CLASS_CELLS, _classes(s.metrics), block[s.model])
            for table in ("table10", "table11"):
                if s.model in pub[table]["perplexity"]:
                    out += row_cells(table, f"APS {s.model}", BIN_CELLS, _bins(s),
                                    pub[table]["perplexity"][s.model])
            continue
        table = "table6" if s.decoding == "greedy" else "table7"
        row = f"{s.task} {s.shots}-shot {s.model}"
        if s.model in pub[table][s.task][s.shots]:
            out += row_cells(table, row, CLASS_CELLS, _classes(s.metrics), pub[table][s.task][s.shots][s.model])
        if s.task == "rating" and s.shots == "zero":
            rho = s.metrics["spearman"]
            if s.model in pub["table13"][s.decoding]:
                out += row_cells("table13", f"ρ {s.decoding} {s.model}", SPEARMAN_CELLS,
                                [rho[g]["rho"] for g in SPEARMAN_CELLS], pub["table13"][s.decoding][s.model])
            if s.decoding == "greedy" and s.model in pub["table10"]["rating"]:
                out += row_cells("table10", f"rating {s.model}", BIN_CELLS, _bins(s),
                                pub["table10"]["rating"][s.model])
        if s.task == "rating" and s.shots == "few" and s.decoding == "greedy":
            for table in ("table11", "table14"):
                if s.model in pub[table]["rating"]:
                    columns = BIN_CELLS if table == "table11" else CLASS_CELLS
                    values = _bins(s) if table == "table11" else _classes(s.metrics)
                    out += row_cells(table, f"rating {s.model}", columns, values, pub[table]["rating"][s.model])
    return out


NOT_COMPUTABLE = "n/a"
"""How a not-computable value of ours prints; the summary line gives the reasons."""


def markdown(cells: Sequence[Cell]) -> str:
    """One table per paper table: each row's cells as ``ours (published)``, differences in bold."""
    out = []
    for table in dict.fromkeys(c.table for c in cells):
        mine = [c for c in cells if c.table == table]
        columns = list(dict.fromkeys(c.column for c in mine))
        note = f"; {NOT_COMPUTABLE}: not computable (why: below)" if not all(c.computable for c in mine) else ""
        out.append(f"## {table.replace('table', 'Table ')}: ours (published); **bold** differs by more than "
                   f"{TOLERANCE}{note}\n")
        by_row: dict[str, dict[str, Cell]] = {}
        for c in mine:
            by_row.setdefault(c.row, {})[c.column] = c
        out.append(markdown_table(["row", *columns], [[row, *(_fmt(by_col.get(col)) for col in columns)]
                                                     for row, by_col in by_row.items()]))
    return "\n".join(out)


def _fmt(c: Cell | None) -> str:
    if c is None:
        return ""
    if c.ours is None:
        return f"{NOT_COMPUTABLE} ({c.published:.2f})"
    text = f"{c.ours:.2f} ({c.published:.2f})"
    return text if c.equal else f"**{text}**"


def summary(cells: Sequence[Cell]) -> str:
    """The one-line count; the reasons of the not-computable cells, each once."""
    equal = sum(c.equal for c in cells)
    missing = Counter(c.reason for c in cells if c.reason is not None)
    line = (f"cells: {equal} equal, {len(cells) - equal - missing.total()} differ, {missing.total()} not computable "
            f"(of {len(cells)} published cells with files)")
    return line + "".join(f"; {n} not computable: {reason}" for reason, n in missing.items())
