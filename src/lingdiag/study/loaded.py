"""A study as its report reads it (:class:`Study`): the study's state and grid, its done runs streamed into
their summaries (``lingdiag.reading.summary``), and what every section reads of them computed once: each
(run, cell) accuracy, each cell across its models, the learning curves, the runs not measured.

The runs are read one at a time as streams into their summaries, so the memory a report takes grows with
the number of runs and items, not with the records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from lingdiag.errors import LingdiagError
from lingdiag.reading import RunSummary, Vocabularies
from lingdiag.reading.summary import summarize_all
from lingdiag.rundir.status import Status
from lingdiag.rundir.study import StudyState, read_state
from lingdiag.study import across
from lingdiag.study.across import Missing, StudyRun
from lingdiag.study.status import GridRow, grid


def unmeasured(state: StudyState, rows: Sequence[GridRow], runs: Sequence[StudyRun]) -> list[Missing]:
    """The planned runs that are in no number of the report, with their state (``lingdiag.rundir.state``
    through the grid): all but the done runs that were read.
    """
    read = {s.entry.key for s in runs}
    status = {r.key: r.status for r in rows}
    return [Missing(e, "not readable" if status[e.key] == Status.DONE else status[e.key]) for e in state.runs
            if e.key not in read]


@dataclass(frozen=True)
class Study:
    """What every section of the study report reads, each computed once, on first use."""

    state: StudyState
    grid: list[GridRow]
    runs: list[StudyRun]
    """The done runs, summarised, in the study's model order (family, size, step)."""
    unreadable: list[str]
    """Runs the grid calls done that could not be read, with why."""
    directory: Path
    """The study directory."""
    seed: int = 0

    @cached_property
    def missing(self) -> list[Missing]:
        """The planned runs in no number of the report (:func:`unmeasured`)."""
        return unmeasured(self.state, self.grid, self.runs)

    @cached_property
    def accuracies(self) -> dict[str, dict[str, across.Accuracy]]:
        """Run key → its accuracy per condition (:func:`~lingdiag.study.across.run_accuracies`): the one
        place a run's accuracy on a cell is counted; the accuracy table and the learning curves read it.
        """
        return {s.entry.key: across.run_accuracies(s) for s in self.runs}

    @cached_property
    def tables(self) -> dict[across.Cell, across.CellTable]:
        """Each cell across its models."""
        return across.cells(self.runs)

    @cached_property
    def curves(self) -> dict[tuple[str, across.Cell], list[across.CurvePoint]]:
        """The learning curves of the models with checkpoints (the curves section's tables and figures)."""
        return across.learning_curves(self.runs, self.accuracies, self.missing)

    @property
    def labels(self) -> list[str]:
        """The label vocabulary of the runs' summaries."""
        return self.runs[0].summary.vocab.labels.names if self.runs else []

    @property
    def items(self) -> list[str]:
        """The item vocabulary of the runs' summaries."""
        return self.runs[0].summary.vocab.items.names if self.runs else []

    @property
    def records(self) -> int:
        """The records of the done runs."""
        return sum(len(s.summary.columns) for s in self.runs)


Read = Callable[[Path, Vocabularies], RunSummary]
"""How a run is read into its summary where a caller keeps them (the viewer); by default every done run is
read by :func:`~lingdiag.reading.summary.summarize_all` (several processes for a large study)."""


def load(out: Path, *, seed: int = 0, read: Read | None = None, vocab: Vocabularies | None = None) -> Study:
    """The study's state and grid, and its done runs streamed into their summaries.

    Only runs the grid calls done (finished, every item answered, current: ``lingdiag.rundir.state``) are
    read; the others are listed with their state, never reported as current numbers.

    Args:
        out: The study directory.
        seed: Seeds the bootstrap intervals and the mixed model's item sample.
        read: Reads a run into its summary (default: all of them by ``summarize_all``).
        vocab: The codes the summaries share (a new vocabulary unless given).
    """
    state = read_state(out)
    assert state is not None
    rows = grid(out, state)
    done = {r.key for r in rows if r.status == Status.DONE}
    vocab = vocab or Vocabularies()
    entries = [e for e in state.runs if e.key in done]
    if read is None:
        found = summarize_all([e.directory(out) for e in entries], vocab)
    else:
        found = []
        for e in entries:
            try:
                found.append(read(e.directory(out), vocab))
            except LingdiagError as error:
                found.append(error)
    runs, unreadable = [], []
    for entry, summary in zip(entries, found, strict=True):
        if isinstance(summary, LingdiagError):
            unreadable.append(f"{entry.name}: {summary}")
            continue
        labels = summary.run.suite.labels
        runs.append(StudyRun(entry, summary, 1 / len(labels) if labels else 0.5))  # minimal pairs: 2 ways
    return Study(state, rows, across.model_order(runs), unreadable, Path(out), seed)
