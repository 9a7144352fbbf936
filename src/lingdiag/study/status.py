"""``study status``: one row per run (done, running, partial, failed with its reason, items left,
ETA), read from ``study.json`` and the run directories; nothing is loaded or run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lingdiag.rundir import Inputs, Phase, RunState, Status, run_state
from lingdiag.rundir.directory import held_locks
from lingdiag.rundir.study import RunEntry, StudyState, read_state

STATES = (Status.DONE, Status.RUNNING, Status.PARTIAL, Status.STALE, Status.UNCHECKED, Status.FAILED,
          Status.GAVE_UP, Status.UNREADABLE, Status.PLANNED)
"""Each run's state (its word a ``rundir.status.Status``), from its directory (``lingdiag.rundir.state``) and
its attempts in ``study.json``:
``done``: finished, every item answered, current; ``running``: a process holds its lock now;
``partial``: started, not finished; ``stale``: its data or suite file (or configuration) changed since it
ran, so ``study run`` runs it again; ``unchecked``: finished, but a file it read (its data or suite file) is
gone, so nobody can say it is current (``study report`` leaves it out; ``study run`` plans it again from the
files the study names now); ``failed``: its last attempt failed and ``study run`` retries it;
``gave up``: failed more than ``retries`` times; ``unreadable``: its files are not as a run writes them;
``planned``: nothing there yet (a deleted run directory too)."""

FINAL = (Status.GAVE_UP, Status.UNREADABLE)
"""States no ``study run`` works on: they have no ETA (the grid leaves it empty)."""


@dataclass(frozen=True, slots=True)
class GridRow:
    """One run as the grid shows it."""

    key: str
    model: str
    suite: str
    language: str | None
    status: Status
    attempts: int
    reason: str | None
    items_done: int
    items_total: int
    eta_seconds: float | None
    """Items left × the study's seconds per item so far; None before any item was timed, and for a run no
    ``study run`` works on (:data:`FINAL`)."""


def _status(entry: RunEntry, state: RunState, retries: int) -> tuple[Status, str | None]:
    """The grid's word for a run, and why where it is not done."""
    failed = entry.state.status == Status.FAILED
    gave_up = Status.GAVE_UP if failed and entry.state.attempts > retries else Status.FAILED
    match state.phase:
        case Phase.RUNNING:
            return Status.RUNNING, None
        case Phase.UNREADABLE:
            return Status.UNREADABLE, state.problem
        case Phase.FINISHED if state.changes:
            return Status.STALE, "; ".join(c.line for c in state.changes)
        case Phase.FINISHED if state.complete and state.unchecked:
            return Status.UNCHECKED, state.line
        case Phase.FINISHED if state.complete:
            return Status.DONE, None
        case Phase.FINISHED:
            return gave_up, entry.state.reason or f"{state.failed} items failed in the backend"
        case Phase.STOPPED:
            return (gave_up, entry.state.reason) if failed else (Status.PARTIAL, state.line)
    return (gave_up, entry.state.reason) if failed else (Status.PLANNED, None)


def grid(out: Path, state: StudyState | None = None) -> list[GridRow]:
    """The study's runs as they stand now: each from its own directory, checked against its planned
    configuration and the files it read (re-hashed where they are).
    """
    state = state or read_state(out)
    assert state is not None
    held = held_locks()  # read once: a study of thousands of runs asks about each
    now = {e.key: run_state(e.directory(out), Inputs(config=e.config), held=held) for e in state.runs}
    timed = sum(e.state.items_done for e in state.runs if e.state.seconds > 0)
    per_item = sum(e.state.seconds for e in state.runs) / timed if timed else None
    rows = []
    for e in state.runs:
        run = now[e.key]
        status, why = _status(e, run, state.retries)
        done = run.recorded if run.phase is not Phase.ABSENT else 0
        # A stale run is run again whole; one given up or unreadable is run no more: it has no time left.
        left = e.state.items_total if status == Status.STALE else max(e.state.items_total - done, 0)
        eta = None if per_item is None or status in FINAL else round(left * per_item, 1)
        rows.append(GridRow(e.key, e.model.label, e.suite, e.language, status, e.state.attempts, why, done,
                            e.state.items_total, eta))
    return rows


def summary(rows: Sequence[GridRow]) -> dict[str, Any]:
    """Runs per state, items left and the study's ETA."""
    etas = [r.eta_seconds for r in rows if r.status not in (Status.DONE, Status.UNCHECKED, *FINAL)]
    return {"runs": len(rows), **{s: sum(r.status == s for r in rows) for s in STATES},
            "items_left": sum(max(r.items_total - r.items_done, 0) for r in rows),
            "eta_seconds": None if any(e is None for e in etas) else round(sum(e for e in etas if e), 1)}


def to_json(rows: Sequence[GridRow]) -> dict[str, Any]:
    """``study status --json``."""
    return {"summary": summary(rows), "runs": [asdict(r) for r in rows]}
