"""The models × items matrix of one cell (a suite and condition), built from run records.

A record is **right** when ``correct`` is true and **wrong** when it is false (an unparsed answer
is wrong: its ``correct`` is false wherever the item has gold). A record with a backend error or
without gold (``correct`` None) is **missing**, never wrong. Runs come from run directories or study
directories (a study's runs named by the study); a run that is not finished, or no longer current
against its inputs, is left out and named in :attr:`Matrices.left_out`.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from lingdiag.errors import LingdiagError, RunError
from lingdiag.reading import LoadedRun, distinct, records_of
from lingdiag.reading.door import FINAL, PARTIAL_FLAG, Acceptance, accepted
from lingdiag.reading.run import opened
from lingdiag.rundir import META, run_state
from lingdiag.rundir.study import STUDY_JSON, read_state

MISSING = -1
"""A cell of the matrix with no graded answer (no gold, a backend error, or not run)."""


@dataclass(frozen=True)
class ResponseMatrix:
    """One cell's answers: ``responses[m, j]`` is 1 (right), 0 (wrong) or :data:`MISSING`."""

    suite: str
    """The suite as the runs name it (the study's name for it in a study)."""
    condition: str
    models: tuple[str, ...]
    item_ids: tuple[str, ...]
    responses: NDArray[np.int8]
    """Models × items, read-only."""
    runs: tuple[str, ...] = ()
    """The run directory of each model (its ``items.jsonl`` lines link to the viewer)."""

    def __post_init__(self) -> None:
        self.responses.setflags(write=False)

    @property
    def key(self) -> tuple[str, str]:
        """(suite, condition)."""
        return self.suite, self.condition

    @property
    def observed(self) -> NDArray[np.bool_]:
        """Where an answer was graded."""
        return np.asarray(self.responses != MISSING)

    def right(self) -> NDArray[np.float64]:
        """1.0 where right, 0.0 elsewhere (wrong or missing)."""
        return np.asarray(self.responses == 1, dtype=np.float64)

    def without(self, model: int) -> ResponseMatrix:
        """The matrix without one model (leave-one-model-out)."""
        keep = [k for k in range(len(self.models)) if k != model]
        return ResponseMatrix(self.suite, self.condition, tuple(self.models[k] for k in keep), self.item_ids,
                              np.ascontiguousarray(self.responses[keep]),
                              tuple(self.runs[k] for k in keep) if self.runs else ())

    def fingerprint(self) -> str:
        """SHA-256 of everything the fit reads: names, items and answers, in no particular order (a study
        orders its models by family and size, ``items fit`` by its plan: the same answers either way).
        """
        rows, columns = np.argsort(self.models, kind="stable"), np.argsort(self.item_ids, kind="stable")
        h = hashlib.sha256()
        for part in (self.suite, self.condition, *(self.models[k] for k in rows), "\0",
                     *(self.item_ids[k] for k in columns)):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        h.update(np.ascontiguousarray(self.responses[np.ix_(rows, columns)]).tobytes())
        return h.hexdigest()


@dataclass(frozen=True)
class Matrices:
    """Every cell's matrix, with the runs left out and why."""

    cells: list[ResponseMatrix]
    left_out: list[str] = field(default_factory=list)
    """One line per run not used (unfinished, stale, unreadable) or cell not fitted."""
    runs: list[LoadedRun] = field(default_factory=list)


def answers_of(run_dir: Path) -> LoadedRun:
    """A run read for its answers: records, suite and names as ``load_run`` gives them, without the
    metrics ``load_run`` recomputes per condition (a quarter of the time, and a matrix needs none).
    """
    run = opened(run_dir)
    records = records_of(run_dir)
    return LoadedRun(Path(run_dir), run.suite, run.model, run.meta, [], frozenset(r.item_id for r in records),
                     records, run.state, run.place, run.place.entry.suite if run.place else "")


def run_dirs(paths: Sequence[Path]) -> list[Path]:
    """The run directories named by ``paths`` (a run, or a study's runs), each once.

    Raises:
        RunError: a path is neither a run nor a study directory.
    """
    found: list[Path] = []
    for p in paths:
        p = Path(p)
        if (p / STUDY_JSON).is_file():
            state = read_state(p)
            assert state is not None
            found += [e.directory(p) for e in state.runs]
        elif (p / META).is_file():
            found.append(p)
        else:
            raise RunError(f"{p}: not a run directory (no {META}) nor a study directory (no {STUDY_JSON})")
    resolved = {d.resolve(): d for d in reversed(found)}  # one directory given twice is one run
    return list(reversed(resolved.values()))


def _usable(d: Path) -> tuple[LoadedRun | None, str | None]:
    """The run read for its answers, or why it is left out (unfinished, stale, unreadable)."""
    if not (d / META).exists():
        absent = run_state(d)
        return None, f"{d}: left out: {absent.line or absent.status}"
    try:
        run = answers_of(d)
    except LingdiagError as e:
        return None, f"{d}: left out: {e}"
    if run.state is not None and not (run.state.finished and run.state.current):
        return None, f"{d}: left out: {run.state.line or run.state.status}"
    return run, None


def matrices(runs: Iterable[LoadedRun]) -> list[ResponseMatrix]:
    """One matrix per (suite, condition) of ``runs``, models in the order given, items in first-seen order."""
    answers: dict[tuple[str, str], dict[str, dict[str, int]]] = defaultdict(dict)
    where: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for run in runs:
        for r in run.records:
            cell = (run.suite_title, r.condition)
            row = answers[cell].setdefault(run.model, {})
            where[cell][run.model] = str(run.path)
            row[r.item_id] = MISSING if r.error is not None or r.correct is None else int(bool(r.correct))
    out = []
    for (suite, condition), by_model in answers.items():
        # An item no model answered with gold (no gold label: ExpliCa's unrelated pairs) is no item of the matrix.
        items = list(dict.fromkeys(i for row in by_model.values() for i, v in row.items() if v != MISSING))
        index = {i: k for k, i in enumerate(items)}
        x = np.full((len(by_model), len(items)), MISSING, dtype=np.int8)
        for m, row in enumerate(by_model.values()):
            kept = [(index[i], v) for i, v in row.items() if i in index]
            x[m, [k for k, _ in kept]] = [v for _, v in kept]
        models = tuple(by_model)
        out.append(ResponseMatrix(suite, condition, models, tuple(items), x,
                                  tuple(where[(suite, condition)][m] for m in models)))
    return out


def from_outcomes(suite: str, condition: str, models: Sequence[str], item_ids: Sequence[str],
                  outcome: NDArray[np.int8], runs: Sequence[str] = ()) -> ResponseMatrix:
    """A cell's matrix from an items × models table of outcomes (1 right, 0 wrong, −1 not graded: a
    study's summaries), one byte per answer; items no model answered with gold are left out, as
    :func:`matrices` leaves them.
    """
    keep = np.flatnonzero((outcome != MISSING).any(1))
    return ResponseMatrix(suite, condition, tuple(models), tuple(item_ids[int(k)] for k in keep),
                          np.ascontiguousarray(outcome[keep].T, dtype=np.int8), tuple(runs))


def read_matrices(paths: Sequence[Path], acceptance: Acceptance = FINAL) -> Matrices:
    """The matrices of the runs under ``paths`` (run or study directories).

    A run named on its own passes the door's ``acceptance`` (``lingdiag.reading.door``: by default one whose
    numbers are not final is refused, naming it and its state; ``PARTIAL`` reads it and names it in the notes).
    A study's runs that are not finished and current are left out, each named, as the study report leaves them.

    Raises:
        RunError: a named run the rule refuses, no usable run (each left out with its reason), or a path that is
            no run or study.
    """
    named = {Path(p).resolve() for p in paths if not (Path(p) / STUDY_JSON).is_file()}
    loaded: list[LoadedRun] = []
    left: list[str] = []
    for d in run_dirs(paths):
        if d.resolve() in named:
            (let_in,) = accepted([d], acceptance)
            loaded.append(answers_of(d))
            if let_in.mark:
                left.append(f"{d}: read though not final ({PARTIAL_FLAG}): {let_in.mark}")
            continue
        run, why = _usable(d)
        if run is not None:
            loaded.append(run)
        if why is not None:
            left.append(why)
    if not loaded:
        why = "; ".join(left[:3]) + (f"; and {len(left) - 3} more" if len(left) > 3 else "")
        raise RunError(f"no finished, current run to read{': ' + why if why else ''}")
    runs = distinct(loaded)
    return Matrices(matrices(runs), left, runs)
