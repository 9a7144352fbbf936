"""A run directory read back, typed and bounded, without the suite registry: its ``meta.json``,
its records and whether it is finished. Metrics recomputed through the suite are
``lingdiag.reading``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lingdiag.records import ItemRecord
from lingdiag.rundir.directory import RunStore
from lingdiag.rundir.meta import RunMeta


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a run directory is: its records against the items planned, and whether a process
    holds its lock (a run still writing).
    """

    done: int
    planned: int | None
    """``meta.json``'s ``planned``; None in runs written before it was recorded."""
    running: bool

    @property
    def line(self) -> str | None:
        """``run in progress: N of M items`` for a run not finished; None for a finished one."""
        short = self.planned is not None and self.done < self.planned
        if not (short or self.running):
            return None
        of = f" of {self.planned}" if self.planned is not None else ""
        state = "run in progress" if self.running else "run not finished (stopped)"
        return f"{state}: {self.done}{of} items"


@dataclass(frozen=True, slots=True)
class RunDir:
    """A run directory as read: never a model call, never a suite."""

    path: Path
    meta: RunMeta
    records: list[ItemRecord]
    progress: Progress

    @property
    def item_ids(self) -> frozenset[str]:
        """The items the run's records cover (reports flag runs over different items)."""
        return frozenset(r.item_id for r in self.records)


def read_run(run_dir: Path) -> RunDir:
    """Read ``run_dir``'s ``meta.json`` and ``items.jsonl``, each checked a regular file of bounded size.

    Raises:
        RunError: one line naming the file (and line and field) that is not as a run writes it.
    """
    store = RunStore(run_dir)
    meta = store.read_meta()
    records = store.load_records()
    return RunDir(Path(run_dir), meta, records, Progress(len(records), meta.planned, store.running()))
