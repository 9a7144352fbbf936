"""``lingdiag items fit`` end to end: read the runs, fit every cell, save the fit and its tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.items import human as humans
from lingdiag.items.fitted import ItemFit, fit_cells, save
from lingdiag.items.flags import DEFAULT_POLICY, FlagPolicy
from lingdiag.items.irt import DEFAULT_PRIORS, Kind, Priors
from lingdiag.items.matrix import read_matrices
from lingdiag.items.tables import write_tables
from lingdiag.items.text import item_texts
from lingdiag.reading.door import FINAL, Acceptance
from lingdiag.reading.item_table import tables_of


@dataclass(frozen=True)
class Built:
    """What ``items fit`` fitted and wrote."""

    fit: ItemFit
    written: list[Path]
    parquet: str | None
    """Why no Parquet was written (None: it was)."""


def fit_runs(paths: Sequence[Path], kind: Kind | None = None, priors: Priors = DEFAULT_PRIORS,
             policy: FlagPolicy = DEFAULT_POLICY, human_file: Path | None = None,
             acceptance: Acceptance = FINAL) -> ItemFit:
    """Fit every cell of the runs under ``paths`` (run or study directories).

    Args:
        paths: Run or study directories.
        kind: ``1pl`` or ``2pl``; None: chosen by the number of models (``fitted.choose_kind``).
        priors: The fit's priors and settings.
        policy: The flags' bounds.
        human_file: Mean human ratings per item (``id``, ``mean_<label>``), for every suite.
        acceptance: Which runs named on their own are read (``lingdiag.reading.door``; final by default).

    Raises:
        LingdiagError: nothing to read, a bad human file, runs over two versions of one dataset, or no cell
            that can be fitted (one line).
    """
    read = read_matrices(paths, acceptance)
    tables = tables_of(read.runs)
    texts = item_texts(tables)
    ratings, notes = humans.from_tables(tables)
    if human_file is not None:
        given = humans.from_file(human_file)
        ratings.update({(m.suite, i): v for m in read.cells for i, v in given.items()})
    gold = {key: t.gold for key, t in texts.items() if t.gold is not None}
    return fit_cells(read.cells, kind, priors, policy, ratings, gold, [*read.left_out, *notes], texts)


def fit_and_write(paths: Sequence[Path], out: Path, kind: Kind | None = None, human_file: Path | None = None,
                  acceptance: Acceptance = FINAL) -> Built:
    """:func:`fit_runs`, then ``OUT/fit.json``, ``OUT/fit.npz``, ``OUT/items.csv``, ``OUT/models.csv`` (and Parquet)."""
    f = fit_runs(paths, kind, human_file=human_file, acceptance=acceptance)
    written = save(f, out)
    tables, parquet = write_tables(f, out)
    return Built(f, written + tables, parquet)
