"""A run directory read back, typed and bounded, without the suite registry: its ``meta.json``,
its records and its state (``lingdiag.rundir.state``). Metrics recomputed through the suite are
``lingdiag.reading``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.records import ItemRecord
from lingdiag.rundir.directory import RunStore
from lingdiag.rundir.meta import RunMeta
from lingdiag.rundir.state import Phase, RunState, run_state


@dataclass(frozen=True, slots=True)
class RunDir:
    """A run directory as read: never a model call, never a suite."""

    path: Path
    meta: RunMeta
    records: list[ItemRecord]
    state: RunState
    """Finished or not, current or not, how far (checked against the records read)."""

    @property
    def item_ids(self) -> frozenset[str]:
        """The items the run's records cover (reports flag runs over different items)."""
        return frozenset(r.item_id for r in self.records)


def checked_state(run_dir: Path) -> RunState:
    """``run_dir``'s state (a finished run's records checked against their digest), refused if it cannot be read.

    Raises:
        RunError: not a run directory, or one not as a run writes it (one line).
    """
    state = run_state(run_dir)
    if state.phase in (Phase.ABSENT, Phase.UNREADABLE) or state.meta is None:
        raise RunError(state.problem or f"{run_dir}: not a run directory")
    return state


def read_run(run_dir: Path) -> RunDir:
    """Read ``run_dir``'s ``meta.json`` and ``items.jsonl``, each checked a regular file of bounded size,
    and its state (a finished run's records re-hashed against what it finished with).

    Raises:
        RunError: one line naming the file (and line and field) that is not as a run writes it.
    """
    state = checked_state(run_dir)
    assert state.meta is not None
    records = RunStore(run_dir).load_records()
    return RunDir(Path(run_dir), state.meta, records, state)
