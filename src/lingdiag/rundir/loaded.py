"""A run directory read back for reports and analyses: metrics recomputed from its records."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.records import UNFINISHED, UNPARSED, ItemRecord, ResultRow
from lingdiag.rundir.directory import RunStore
from lingdiag.rundir.meta import RunMeta


@dataclass(frozen=True)
class LoadedRun:
    """A run directory read back for reports and analyses (never a model call)."""

    path: Path
    suite: str
    model: str
    meta: RunMeta
    rows: list[ResultRow]
    """One row per condition, metrics recomputed from ``items.jsonl`` with the suite's function."""
    item_ids: frozenset[str] = frozenset()
    """The items the run's records cover (reports flag runs over different items)."""
    records: list[ItemRecord] = field(default_factory=list)
    """Every record, as read once for the metrics (the report's item browser shows them)."""


def load_run(run_dir: Path) -> LoadedRun:
    """Read ``run_dir`` and recompute every condition's metrics from its records."""
    store = RunStore(run_dir)
    meta = store.read_meta()
    suite = meta.suite_of(run_dir)
    model = meta.model
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for n, r in enumerate(store.load_records(), 1):
        if suite.labels and r.label not in (*suite.labels, UNPARSED, UNFINISHED):
            raise RunError(f"{store.items_path}, line {n}, field 'label': {r.label!r} is not a {suite.name} label "
                           f"({', '.join(suite.labels)} or {UNPARSED})")
        by_condition[r.condition].append(r)
    rows = [ResultRow(model, c, dict(rs[0].axes), suite.condition_metrics(rs), str(run_dir), meta.dataset,
                      meta.n_params)
            for c, rs in by_condition.items()]
    records = [r for rs in by_condition.values() for r in rs]
    return LoadedRun(Path(run_dir), suite.name, model, meta, rows, frozenset(r.item_id for r in records), records)
