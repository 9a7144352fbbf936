"""``study status``: one row per run (done, running, partial, failed with its reason, items left,
ETA), read from ``study.json`` and the run directories; nothing is loaded or run.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lingdiag.rundir import RunStore
from lingdiag.study.state import RunEntry, StudyState, read_state

STATES = ("done", "running", "partial", "failed", "gave up", "planned")
"""``running``: a process holds the run's lock now; ``gave up``: failed more than ``retries`` times."""


@dataclass(frozen=True, slots=True)
class GridRow:
    """One run as the grid shows it."""

    key: str
    model: str
    suite: str
    language: str | None
    status: str
    attempts: int
    reason: str | None
    items_done: int
    items_total: int
    eta_seconds: float | None
    """Items left × the study's seconds per item so far; None before any item was timed."""


def held(run_dir: Path) -> bool:
    """Whether a process holds the run directory's lock (``RunStore.lock``) now."""
    path = Path(run_dir) / ".lock"
    if not path.is_file():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the probe's own shared lock
    return False


def _done_items(run_dir: Path) -> int:
    if not run_dir.is_dir():
        return 0
    return len({(r.condition, r.item_id) for r in RunStore(run_dir).load_records() if r.error is None})


def _status(entry: RunEntry, out: Path, retries: int, done: int) -> str:
    if entry.state.status == "done":
        return "done"
    if held(entry.directory(out)):
        return "running"
    if entry.state.status == "failed":
        return "gave up" if entry.state.attempts > retries else "failed"
    return "partial" if done else "planned"


def grid(out: Path, state: StudyState | None = None) -> list[GridRow]:
    """The study's runs as they stand now."""
    state = state or read_state(out)
    assert state is not None
    done = {e.key: e.state.items_total if e.state.status == "done" else _done_items(e.directory(out))
            for e in state.runs}
    timed = sum(e.state.items_done for e in state.runs if e.state.seconds > 0)
    per_item = sum(e.state.seconds for e in state.runs) / timed if timed else None
    rows = []
    for e in state.runs:
        left = max(e.state.items_total - done[e.key], 0)
        rows.append(GridRow(e.key, e.model.label, e.suite, e.language, _status(e, out, state.retries, done[e.key]),
                            e.state.attempts, e.state.reason, done[e.key], e.state.items_total,
                            None if per_item is None else round(left * per_item, 1)))
    return rows


def summary(rows: Sequence[GridRow]) -> dict[str, Any]:
    """Runs per state, items left and the study's ETA."""
    etas = [r.eta_seconds for r in rows if r.status not in ("done", "gave up")]  # gave up: nothing left to run
    return {"runs": len(rows), **{s: sum(r.status == s for r in rows) for s in STATES},
            "items_left": sum(max(r.items_total - r.items_done, 0) for r in rows),
            "eta_seconds": None if any(e is None for e in etas) else round(sum(e for e in etas if e), 1)}


def to_json(rows: Sequence[GridRow]) -> dict[str, Any]:
    """``study status --json``."""
    return {"summary": summary(rows), "runs": [asdict(r) for r in rows]}
