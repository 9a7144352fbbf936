"""Tables (and an optional HTML page with figures) from run directories, offline.

Reports read ``items.jsonl`` and ``meta.json`` and recompute metrics with the suite's
pure metric function; they never load a model.
"""

from __future__ import annotations

import html as html_lib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lingdiag.run import summary
from lingdiag.store import RunStore
from lingdiag.suite import SUITES


def recompute(run_dir: Path) -> tuple[str, str, dict[str, dict[str, Any]]]:
    """``(suite, model, metrics per condition)`` of one run, from its records."""
    store = RunStore(run_dir)
    meta = store.read_json("meta.json")
    suite = SUITES.get(meta["config"]["suite"])
    by_condition = defaultdict(list)
    for r in store.load_records():
        by_condition[r.condition].append(r)
    metrics = {c: {**suite.metrics(rs), **summary(rs)} for c, rs in by_condition.items()}
    return suite.name, str(meta["model"].get("model", meta["config"]["model"])), metrics


def combined(runs: Sequence[Path], html_out: Path | None = None) -> tuple[str, dict[str, Any]]:
    """One table per suite over all ``runs`` (e.g. several models: the model-scale view)."""
    per_suite: dict[str, list[tuple[str, str, dict[str, Any]]]] = defaultdict(list)
    everything: dict[str, Any] = {}
    for run_dir in runs:
        suite, model, metrics = recompute(Path(run_dir))
        everything[str(run_dir)] = {"suite": suite, "model": model, "metrics": metrics}
        per_suite[suite] += [(model, c, m) for c, m in metrics.items()]
    text = "\n".join(SUITES.get(s).table(rows) for s, rows in per_suite.items())
    if html_out is not None:
        from lingdiag.report.html import write_html

        write_html(Path(html_out), text, everything, runs)
    return text, everything


def escape(text: str) -> str:
    """HTML-escape untrusted text (model output)."""
    return html_lib.escape(text, quote=True)
