"""A study in the viewer: its ``study.json`` (``lingdiag.rundir.study``), its grid (``lingdiag study
status``'s, :func:`lingdiag.study.status.grid`), its models in the study's order (family, size, then
training step, numerically), its report's sections (``lingdiag.study.report``) and one item across
every model and checkpoint, with that item's learning curve where a model has checkpoints.

Runs are read through their summaries (``lingdiag.reading.summary``), one streamed pass each, kept
while the run's files are unchanged (:class:`Summaries`), so a study of forty models × 100,000 items
is indexed once and every later page reads arrays and a few lines from disk. A run a process is writing
is not summarised again at every request: its lines are found by scanning its file instead.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from lingdiag.errors import LingdiagError, RunError
from lingdiag.reading import RunSummary, Vocabularies, summarize
from lingdiag.reading.summary import NONE, joined, scan_all
from lingdiag.records import ItemRecord
from lingdiag.rundir import Status, lock_held
from lingdiag.rundir.study import RUNS, RunEntry, StudyModel, StudyState, read_state
from lingdiag.study.across import model_key
from lingdiag.study.status import GridRow, grid
from lingdiag.view import index
from lingdiag.view.catalog import Catalog, Group
from lingdiag.view.files import ITEMS_BYTES, inside
from lingdiag.view.scores import scores

OUTSIDE = "not a run inside the served directory (a symlink leading out, or no run there); not read"
"""Why a planned run of a study is not read by the viewer though something is at its place."""

Version = tuple[tuple[int, int, int], ...]
"""(inode, size, mtime) of a run's ``meta.json`` and ``items.jsonl``: a summary is current while they are."""


def version(run: Path) -> Version:
    """The version of ``run``'s files (missing ones count as zeros)."""
    out = []
    for name in ("meta.json", "items.jsonl"):
        try:
            info = os.stat(run / name)
            out.append((info.st_ino, info.st_size, info.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)


class Summaries:
    """Every run's summary the viewer has read, by path, kept while its files are unchanged; one vocabulary
    for all, so an item has one code in every run (a study's item page looks it up in each).
    """

    def __init__(self, lines: index.Index | None = None) -> None:
        self.lines = lines or index.Index()
        """The offsets of the runs' records, by which every record is checked within its bound before a run
        is summarised (:func:`lingdiag.view.index.bounded`)."""
        self.vocab = Vocabularies()
        self._known: dict[Path, tuple[Version, RunSummary]] = {}
        self._lock = threading.Lock()  # one summariser at a time: the vocabulary grows as runs are read
        self._pending: set[Path] = set()
        """Runs the background is reading: a request for one waits for it rather than reading it twice."""
        self._read = threading.Condition()

    def of(self, run: Path) -> RunSummary:
        """``run``'s summary as its files are now (read again only when they changed).

        Raises:
            RunError: the run cannot be read (its files checked as the viewer's: inside the run, bounded).
        """
        self.readable(run)
        with self._read:
            self._read.wait_for(lambda: run not in self._pending)
        with self._lock:
            now = version(run)
            known = self._known.get(run)
            if known is not None and known[0] == now:
                return known[1]
            summary = summarize(run, self.vocab)
            self._known[run] = (now, summary)
            return summary

    def readable(self, run: Path) -> None:
        """Check ``run``'s files as the viewer reads every file: inside the run, regular, and each within its
        bound (``meta.json``, ``items.jsonl``, and each record of it).

        Raises:
            RunError: the first that is not.
        """
        inside(run, "meta.json")
        if (run / "items.jsonl").exists():
            inside(run, "items.jsonl", ITEMS_BYTES)
            index.bounded(self.lines.of(run))

    def current(self, run: Path) -> RunSummary | None:
        """``run``'s summary if one is kept for its files as they are now (never reads)."""
        known = self._known.get(run)
        return known[1] if known is not None and known[0] == version(run) else None

    def prebuild(self, runs: Sequence[Path], then: Callable[[], None] = lambda: None) -> threading.Thread:
        """Summarise ``runs`` in a background thread, by several processes where there is much to read
        (``lingdiag.reading.summary.scan_all``; a run that cannot be read is left to its page), then call
        ``then`` (the viewer draws its studies' reports).
        """
        def build() -> None:
            readable = []
            for run in runs:
                try:
                    self.readable(run)
                    readable.append(run)
                except LingdiagError:
                    continue
            versions = [version(run) for run in readable]  # as read: a run changed meanwhile is read again
            with self._read:
                self._pending.update(readable)
            try:
                for run, seen, scanned in zip(readable, versions, scan_all(readable), strict=True):
                    if not isinstance(scanned, LingdiagError):
                        with self._lock:
                            self._known[run] = (seen, joined(scanned, self.vocab))
                    with self._read:
                        self._pending.discard(run)
                        self._read.notify_all()
            finally:
                with self._read:
                    self._pending.clear()
                    self._read.notify_all()
            try:
                then()
            except LingdiagError:
                return
        thread = threading.Thread(target=build, name="lingdiag-view-summaries", daemon=True)
        thread.start()
        return thread


@dataclass(frozen=True)
class StudyGroup:
    """A study group of the catalog read as a study."""

    group: Group
    state: StudyState
    ids: dict[str, str]
    """Run key → the viewer's id of its run directory (runs not on disk have none)."""

    @property
    def out(self) -> Path:
        """The study directory."""
        return self.group.path

    @property
    def entries(self) -> list[RunEntry]:
        """The planned runs in the study's order (:func:`model_key`, then as planned)."""
        order = {e.key: k for k, e in enumerate(self.state.runs)}
        return sorted(self.state.runs, key=lambda e: (*model_key(e.model), order[e.key]))

    @property
    def models(self) -> list[StudyModel]:
        """The study's models in order, each once."""
        return list({e.model.label: e.model for e in self.entries}.values())

    def grid(self) -> list[GridRow]:
        """The grid of runs (``lingdiag study status``'s), in the study's order; a run directory that is there but
        not among the served runs (a symlink leading out of the served directory) is unreadable here, as every
        page of the viewer leaves it out.
        """
        rows = {r.key: r for r in grid(self.out, self.state)}
        out = []
        for e in self.entries:
            row = rows[e.key]
            if e.key not in self.ids and os.path.lexists(e.directory(self.out)):
                row = replace(row, status=Status.UNREADABLE, reason=OUTSIDE, items_done=0, eta_seconds=None)
            out.append(row)
        return out

    def served(self, run: Path) -> Path:
        """``run`` (a directory of this study's runs) where it is one of the served runs.

        Raises:
            RunError: it is not (a symlink out of the served directory, or not found as a run).
        """
        if run not in {self.out / RUNS / key for key in self.ids}:
            raise RunError(f"{run.relative_to(self.out) if run.is_relative_to(self.out) else run.name}: {OUTSIDE}")
        return run


def study_of(group: Group, cat: Catalog) -> StudyGroup:
    """``group`` read as the study its ``study.json`` describes.

    Raises:
        RunError: ``study.json`` is damaged or not a study's.
    """
    state = read_state(group.path)
    assert state is not None
    # A study's run sits at runs/MODEL/SUITE: its key is its two last folders (no path resolved per entry).
    by_key = {f"{cat.runs[i].path.parent.name}/{cat.runs[i].path.name}": i for i in group.runs
              if cat.runs[i].path.parent.parent == group.path / RUNS}
    return StudyGroup(group, state, {e.key: by_key[e.key] for e in state.runs if e.key in by_key})


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One model's record of an item (one condition of one run of the study)."""

    entry: RunEntry
    run_id: str
    line: int
    """0-based line of the record in the run's ``items.jsonl``."""
    record: ItemRecord


def _lines_of(run: Path, item_id: str, summaries: Summaries, offsets: index.Offsets) -> list[int]:
    """The lines holding ``item_id`` in ``run``: from its summary, or, while a process writes the run, by
    scanning its file (the item id as JSON writes it, then the record parsed to confirm).
    """
    summary = summaries.current(run)
    if summary is None and not lock_held(run):  # a run being written is scanned, not summarised again and again
        try:
            summary = summaries.of(run)
        except LingdiagError:
            summary = None
    if summary is not None:
        code = summaries.vocab.items.get(item_id)
        return [] if code == NONE else [int(k) for k in np.flatnonzero(summary.columns.item == code)]
    needle = json.dumps({"item_id": item_id}, ensure_ascii=False)[1:-1].encode()
    return [k for k, raw in index.lines(offsets) if needle in raw and index.record(offsets, k, raw).item_id == item_id]


def item_rows(study: StudyGroup, item_id: str, summaries: Summaries, offsets_of: Callable[[Path], index.Offsets],
              path_of: Callable[[str], Path]) -> list[ItemRow]:
    """Item ``item_id`` in every run of the study, in the study's order, each condition's record."""
    out = []
    for e in study.entries:
        run_id = study.ids.get(e.key)
        if run_id is None:
            continue
        path = path_of(run_id)
        try:
            offsets = offsets_of(path)
            for line in _lines_of(path, item_id, summaries, offsets):
                out += [ItemRow(e, run_id, k, r) for k, r in index.read(offsets, line, 1)]
        except RunError:
            continue  # an unreadable run is shown as such on the study's page
    return out


@dataclass(frozen=True, slots=True)
class ItemPoint:
    """One checkpoint's record of an item."""

    checkpoint: str
    x: float
    """Its step (tokens where no step is given)."""
    correct: bool | None
    margin: float | None
    """Signed by the grade (:attr:`lingdiag.view.scores.Scores.signed`)."""
    axis: str = "step"
    """What ``x`` counts: ``step``, or ``tokens`` for a model whose checkpoints give no step."""
    missing: str | None = None
    """Why the checkpoint has no record of the item (its run not measured: gave up, planned...); None where it
    has one. The curve marks it, as the study report's curves do, instead of joining its neighbours."""


def _place(m: StudyModel) -> float:
    """Where the checkpoint sits on its model's one training axis (step, or tokens where none gives a step)."""
    return float(m.step) if m.step is not None else float(m.tokens or 0.0)


def _axis(m: StudyModel) -> str:
    return "step" if m.step is not None else "tokens"


def item_curves(rows: Sequence[ItemRow], planned: Sequence[RunEntry] = (),
                states: Mapping[str, str] | None = None) -> dict[tuple[str, str, str], list[ItemPoint]]:
    """(model, suite, condition) → the item at each checkpoint of the model, in training order; each checkpoint
    ``planned`` for the model and suite without a record of the item is there too, marked with why
    (``states``: run key → its state in the grid).
    """
    out: dict[tuple[str, str, str], list[ItemPoint]] = {}
    for r in rows:
        m = r.entry.model
        if m.base is None:
            continue
        correct = None if r.record.error is not None else r.record.correct
        out.setdefault((m.base, r.entry.suite, r.record.condition), []).append(
            ItemPoint(m.label, _place(m), correct, scores(r.record).signed, _axis(m)))
    for (base, suite, _), points in out.items():
        have = {p.checkpoint for p in points}
        points += [ItemPoint(e.model.label, _place(e.model), None, None, _axis(e.model),
                             f"not measured ({(states or {}).get(e.key, 'no record')})")
                   for e in planned if e.model.base == base and e.suite == suite and e.model.label not in have]
        points.sort(key=lambda p: p.x)
    return out
