"""Tables from run directories, offline: each suite's own table over the rows of all runs.

Reports read ``items.jsonl`` and ``meta.json`` and recompute metrics with the suite's
pure metric function; they never load a model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.analysis import after_thinking, languages, thinking
from lingdiag.io.paths import portable
from lingdiag.metrics import interpretable
from lingdiag.reading import LoadedRun
from lingdiag.records import ResultRow
from lingdiag.suite import Suite


def rows_by_suite(runs: Sequence[LoadedRun]) -> dict[str, list[ResultRow]]:
    """Suite (as the report names it: ``LoadedRun.suite_title``) → the rows of all its runs, in the
    order the runs were given. The rows carry each run's model name, made distinct where two runs'
    models share one (``lingdiag.reading.load_runs``).
    """
    out: dict[str, list[ResultRow]] = defaultdict(list)
    for run in runs:
        out[run.suite_title] += run.rows
    return dict(out)


def suites_of(runs: Sequence[LoadedRun]) -> dict[str, Suite]:
    """Suite (as the report names it) → the suite object its runs were scored with."""
    return {run.suite_title: run.suite for run in runs}


def tables(runs: Sequence[LoadedRun]) -> str:
    """One markdown section per suite over all its runs (e.g. several models: the model-scale view),
    headed by a warning where the runs of a suite cover different items.
    """
    return "\n".join(suite_tables(runs).values())


def suite_tables(runs: Sequence[LoadedRun]) -> dict[str, str]:
    """Suite name → its markdown section (:func:`tables` joins them; the HTML page lays them out);
    a suite whose items are aligned translations gets the comparison across languages below its table.
    """
    out = {}
    for s, rows in rows_by_suite(runs).items():
        mine = [r for r in runs if r.suite_title == s]
        across = languages.section([(str(r.path), r.model, r.records) for r in mine])
        text = (_in_progress(mine) + _ignored_sizes(mine) + _item_set_warning(mine) + _not_interpretable(mine)
                + mine[0].suite.tables(rows) + ("\n" + across if across else "") + _thinking(mine))
        # Shared as it is (Markdown, LaTeX, HTML): a stale line's data file, a load error's cache path, no
        # path of this machine.
        out[s] = portable(text, [r.path.parent for r in mine])
    return out


def _not_interpretable(runs: Sequence[LoadedRun]) -> str:
    """The note naming the conditions, per model as the table names it, that are not interpretable."""
    return interpretable.note({f"{r.model} · {c}": why for r in runs
                               for c, why in interpretable.reasons(r.records).items()})


def _thinking(runs: Sequence[LoadedRun]) -> str:
    """The thinking sections of the runs that have the thinking axis or conditions scored after
    thinking (empty for the others).
    """
    found = [s for r in runs for s in (thinking.section(r.suite, r.records, r.model),
                                       after_thinking.section(r.records)) if s]
    return "\n" + "\n".join(found) if found else ""


def _in_progress(runs: Sequence[LoadedRun]) -> str:
    """A line per run not finished (still running, or stopped) or not current (its data or suite file
    changed since), so its table is not taken as final and current.
    """
    lines = [f"**{r.state.line}** ({r.name}): metrics as recorded, not final and current\n\n" for r in runs
             if r.state is not None and r.state.line]
    return "".join(lines)


def _ignored_sizes(runs: Sequence[LoadedRun]) -> str:
    """A line per run whose recorded parameter count is not used (negative, zero, not finite, not a
    number), said whether or not a scaling figure is drawn.
    """
    return "".join(f"**{r.meta.identity.n_params_problem}** ({r.name})\n\n" for r in runs
                   if r.meta.identity.n_params_problem)


def _item_set_warning(runs: Sequence[LoadedRun]) -> str:
    # Metrics over different items (another --limit, dataset or failed items) are not comparable.
    if len({r.item_ids for r in runs}) <= 1:
        return ""
    common = frozenset.intersection(*(r.item_ids for r in runs))
    return ("**Runs over different items** (metrics not comparable): "
            + "; ".join(f"{r.name}: {len(r.item_ids)} items, {len(r.item_ids - common)} not in every run"
                        for r in runs) + "\n\n")


def metrics_json(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """``{run_dir: {suite, model, metrics: {condition: metrics}}}`` (``lingdiag report --json``)."""
    return {str(r.path): {"suite": r.suite_title, "model": r.model,
                          "state": None if r.state is None else r.state.status,
                          "metrics": {x.condition: x.metrics for x in r.rows}}
            for r in runs}
