"""A run directory's state, computed from its files alone: the one answer to "did it finish, is it
still current, how far is it, is a process writing it" that resume, ``study run|status|report``,
``submit``, ``merge``, ``report`` and the viewer all ask, so no two of them can disagree.

- **finished**: ``finish`` wrote the run's end, ``meta.json``'s ``finished`` part (the records it
  ended with: count, failed items, size and SHA-256 of ``items.jsonl``). Runs written before that
  part existed count as finished when ``metrics.json`` is there and ``meta.json`` has no
  ``planned`` (which every session writes while it runs and ``finish`` drops), and imports (their
  records written whole, at once).
- **running**: a live process holds the run's ``flock`` (read from ``/proc/locks``, so asking never
  takes the lock a starting run needs); **stopped**: started, not finished, nobody writing.
- **current**: nothing it was computed from changed: its configuration (against the one a caller
  plans now, where one is given; transport settings excepted), what it read of every file (the data,
  a dataset folder, the files an expander read such as a replayed run's ``items.jsonl``, the suite
  file; ``lingdiag.rundir.inputs``), read again now or compared with the caller's. A file that is gone
  cannot be checked: it is named in ``unchecked``, not taken as changed, and the run's status is
  ``unchecked``, never ``finished``: nobody can say it is current.
  Records edited after the run finished (``items.jsonl`` no longer the file ``finished`` describes)
  make it not current too: its numbers are not the run's.
- **unreadable**: ``meta.json`` is not as a run writes it (or ``items.jsonl`` cannot be read).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from lingdiag.errors import RunError
from lingdiag.io.paths import sha256_file
from lingdiag.rundir.directory import RunStore, lock_held
from lingdiag.rundir.inputs import Change, Inputs, drift
from lingdiag.rundir.meta import RunMeta
from lingdiag.rundir.parts import FinishedPart
from lingdiag.rundir.status import Status
from lingdiag.rundir.summary import records_digest, summarised_counts

METRICS = "metrics.json"


class Phase(Enum):
    """Where a run directory stands (its value: its word, a :class:`Status`)."""

    ABSENT = Status.ABSENT
    """No ``meta.json``: never started, or deleted."""
    UNREADABLE = Status.UNREADABLE
    """Not as a run writes it (see ``RunState.problem``)."""
    RUNNING = Status.RUNNING
    STOPPED = Status.STOPPED
    """Started and not finished, with no process writing it (killed, crashed, or failed)."""
    FINISHED = Status.FINISHED


@dataclass(frozen=True, slots=True)
class RunState:
    """A run directory's state (see the module's text)."""

    path: Path
    phase: Phase
    meta: RunMeta | None = None
    planned: int | None = None
    """Items the run records when it finishes (a finished run: the records it ended with); None
    where the run never said (written before ``planned`` existed)."""
    recorded: int = 0
    """(condition, item) pairs recorded with an answer (no backend error)."""
    failed: int = 0
    """Items whose record carries a backend error (a run again retries them)."""
    changes: tuple[Change, ...] = ()
    """Why the run is not current; empty when it is (as far as ``unchecked`` allows)."""
    unchecked: tuple[str, ...] = ()
    """Inputs that could not be checked (a recorded file that is not there now)."""
    problem: str | None = None
    """Why the run is unreadable, one line."""
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Conditions the backend could not serve, with the reason."""

    @property
    def finished(self) -> bool:
        """``finish`` wrote the run's end."""
        return self.phase is Phase.FINISHED

    @property
    def current(self) -> bool:
        """Nothing the run was computed from changed (as far as could be checked)."""
        return not self.changes

    @property
    def complete(self) -> bool:
        """Finished, current and with every item answered: what a study counts as done and a merge
        as a finished shard.
        """
        return self.finished and self.current and self.failed == 0

    @property
    def checked(self) -> bool:
        """Every input the run recorded could be checked (none is gone)."""
        return not self.unchecked

    @property
    def status(self) -> Status:
        """One word: ``absent``, ``unreadable``, ``running``, ``stopped``, ``stale``, ``failed``
        (finished with failed items), ``unchecked`` (finished, but an input it read is gone, so whether it is
        current cannot be said) or ``finished``.
        """
        if self.phase is Phase.FINISHED and self.changes:
            return Status.STALE
        if self.phase is Phase.FINISHED and self.failed:
            return Status.FAILED
        if self.phase is Phase.FINISHED and self.unchecked:
            return Status.UNCHECKED
        return self.phase.value

    @property
    def line(self) -> str | None:
        """What a report says above a run whose numbers are not final and current (or whose inputs
        cannot be checked); None for one that is finished and current.
        """
        of = f" of {self.planned}" if self.planned is not None else ""
        match self.phase:
            case Phase.RUNNING:
                return f"run in progress: {self.recorded}{of} items"
            case Phase.STOPPED:
                return f"run not finished (stopped): {self.recorded}{of} items"
            case Phase.ABSENT | Phase.UNREADABLE:
                return f"run not readable: {self.problem}"
        if self.changes:
            return "stale, not current: " + "; ".join(c.line for c in self.changes)
        if self.unchecked:
            return unchecked_line(self.unchecked)
        return None


def unchecked_line(gone: Sequence[str]) -> str:
    """What a report says above a run whose inputs cannot be checked."""
    return f"unchecked, not known to be current: {', '.join(gone)} not found (cannot check what the run read)"


def run_state(run_dir: Path, inputs: Inputs | None = None, *, held: frozenset[str] | None = None) -> RunState:
    """The state of ``run_dir`` from its files (and ``inputs``, where a caller plans the run now).

    Args:
        run_dir: The run directory.
        inputs: What the run should have been computed from now; None checks its recorded files only.
        held: The locks held now (``directory.held_locks``), read once by a caller asking about many runs.

    Never raises for a damaged directory: it is ``unreadable`` with its reason.
    """
    store = RunStore(Path(run_dir))
    path = store.root
    if not store.meta_path.exists() and not store.meta_path.is_symlink():
        return RunState(path, Phase.ABSENT, problem=f"{store.meta_path} does not exist; is {path} a lingdiag run "
                                                    "directory?")
    try:
        meta = store.read_meta()
        changes, unchecked = drift(meta, inputs or Inputs())
        if lock_held(path, held):
            recorded, failed = _count(store)
            return RunState(path, Phase.RUNNING, meta, meta.planned, recorded, failed, changes, unchecked,
                            skipped=meta.skipped or {})
        if meta.finished is not None:
            end = meta.finished
            edited = _edited(store, end)
            return RunState(path, Phase.FINISHED, meta, end.records, end.records - end.failed, end.failed,
                            changes + edited, unchecked, skipped=meta.skipped or {})
        # Before ``finished`` existed, a finished run was one with metrics.json and no ``planned``, or an
        # import (its records written whole, at once); its counts are its summary's where it has one.
        legacy = meta.planned is None and ((path / METRICS).is_file() or meta.imported is not None)
        recorded, failed = (legacy and summarised_counts(store)) or _count(store)
        phase = Phase.FINISHED if legacy else Phase.STOPPED
        planned = recorded + failed if legacy else meta.planned
        return RunState(path, phase, meta, planned, recorded, failed, changes, unchecked, skipped=meta.skipped or {})
    except RunError as e:
        return RunState(path, Phase.UNREADABLE, problem=str(e))


def _count(store: RunStore) -> tuple[int, int]:
    """(answered, failed) (condition, item) pairs of the records, the last record of a pair counting."""
    last = {(r.condition, r.item_id): r.error is None for r in store.load_records()}
    answered = sum(last.values())
    return answered, len(last) - answered


def _edited(store: RunStore, end: FinishedPart) -> tuple[Change, ...]:
    """A change if ``items.jsonl`` is not the file the run finished with: its SHA-256, trusted without
    reading while the file is the one its summary hashed (``rundir.summary``: the file's change time
    included, which no edit can restore), never its size alone.
    """
    try:
        digest = records_digest(store)
    except RunError:
        digest = None
    if digest != end.sha256:
        return (Change("records", f"{end.records} records, {end.bytes} bytes"),)
    return ()


def finished_part(store: RunStore, records: Sequence[Any]) -> dict[str, Any]:
    """The ``finished`` part of a run whose ``items.jsonl`` now holds ``records`` (``finish``)."""
    return {"records": len(records), "failed": sum(r.error is not None for r in records),
            "bytes": os.stat(store.items_path).st_size, "sha256": sha256_file(store.items_path)}
