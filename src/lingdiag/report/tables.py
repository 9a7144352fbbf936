"""Tables from run directories, offline: each suite's own table over the rows of all runs.

Reports read ``items.jsonl`` and ``meta.json`` and recompute metrics with the suite's
pure metric function; they never load a model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lingdiag.records import ResultRow
from lingdiag.store import LoadedRun, load_run
from lingdiag.suite import SUITES


def rows_by_suite(runs: Sequence[LoadedRun]) -> dict[str, list[ResultRow]]:
    """Suite name → the rows of all its runs, in the order the runs were given."""
    out: dict[str, list[ResultRow]] = defaultdict(list)
    for run in runs:
        out[run.suite] += run.rows
    return out


def tables(runs: Sequence[LoadedRun]) -> str:
    """One markdown section per suite over all its runs (e.g. several models: the model-scale view)."""
    return "\n".join(SUITES.get(s).table(rows) for s, rows in rows_by_suite(runs).items())


def metrics_json(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """``{run_dir: {suite, model, metrics: {condition: metrics}}}`` (``lingdiag report --json``)."""
    return {str(r.path): {"suite": r.suite, "model": r.model, "metrics": {x.condition: x.metrics for x in r.rows}}
            for r in runs}


def load_runs(run_dirs: Sequence[Path]) -> list[LoadedRun]:
    """Every run directory, read and recomputed."""
    return [load_run(Path(d)) for d in run_dirs]
