"""A run directory read back for reports and analyses: its records (``lingdiag.rundir.read_run``)
with every condition's metrics recomputed through the run's suite.

Kept outside ``lingdiag.rundir`` so that reading a run directory needs no suite: this is the one
place the two meet.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.io.limits import read_regular
from lingdiag.records import UNFINISHED, UNPARSED, ItemRecord, ResultRow
from lingdiag.rundir import SUITE_COPY, Progress, RunMeta, read_run
from lingdiag.suite import SUITES, Suite


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
    progress: Progress | None = None
    """How far the run is (None for runs built in memory)."""


def suite_of(meta: RunMeta, run_dir: Path) -> Suite:
    """The suite a run's records belong to: the copy of its suite file where the run kept one
    (the file may have moved or changed since), else the registered name in its config.

    Raises:
        RunError: the copy is not the file ``meta.json`` records (edited since).
    """
    copy = Path(run_dir) / SUITE_COPY
    if meta.suite_file and (copy.exists() or copy.is_symlink()):
        text = read_regular(copy)
        expected = meta.suite_file.sha256
        actual = hashlib.sha256(text).hexdigest()
        # The copy is the file's text, so a file that began with a byte-order mark lost it.
        with_bom = hashlib.sha256(b"\xef\xbb\xbf" + text).hexdigest()
        if expected not in (actual, with_bom):  # an edited copy would change the metrics read from the records
            raise RunError(f"{copy}: SHA-256 {actual} is not the {expected} meta.json records for the suite file "
                           "the run used; restore the copy (or the file it came from) before reading this run")
        return SUITES.get(str(copy))
    return SUITES.get(meta.suite)


def load_run(run_dir: Path) -> LoadedRun:
    """Read ``run_dir`` and recompute every condition's metrics from its records."""
    read = read_run(run_dir)
    meta = read.meta
    suite = suite_of(meta, run_dir)
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for n, r in enumerate(read.records, 1):
        if suite.labels and r.label not in (*suite.labels, UNPARSED, UNFINISHED):
            raise RunError(f"{Path(run_dir) / 'items.jsonl'}, line {n}, field 'label': {r.label!r} is not a "
                           f"{suite.name} label ({', '.join(suite.labels)} or {UNPARSED})")
        by_condition[r.condition].append(r)
    rows = [ResultRow(meta.model, c, dict(rs[0].axes), suite.condition_metrics(rs), str(run_dir), meta.dataset,
                      meta.n_params)
            for c, rs in by_condition.items()]
    records = [r for rs in by_condition.values() for r in rs]
    return LoadedRun(Path(run_dir), suite.name, meta.model, meta, rows, read.item_ids, records, read.progress)
