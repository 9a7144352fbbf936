"""Tables from run directories, offline: each suite's own table over the rows of all runs.

Reports read ``items.jsonl`` and ``meta.json`` and recompute metrics with the suite's
pure metric function; they never load a model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lingdiag.analysis import after_thinking, languages, thinking
from lingdiag.metrics import interpretable
from lingdiag.reading import LoadedRun, load_run
from lingdiag.records import ResultRow
from lingdiag.suite import SUITES


def rows_by_suite(runs: Sequence[LoadedRun]) -> dict[str, list[ResultRow]]:
    """Suite name → the rows of all its runs, in the order the runs were given.

    Runs of one model that share a condition but differ in dataset or prompt source are told
    apart, not refused: their model names gain what differs (``smollm2-135m · official``,
    ``· paper``, or, failing both, the run directory), so tables, figures and analyses show them
    as separate series.
    """
    out: dict[str, list[ResultRow]] = defaultdict(list)
    for run in runs:
        out[run.suite] += run.rows
    return {suite: _distinct(rows) for suite, rows in out.items()}


def display_names(runs: Sequence[LoadedRun]) -> dict[str, str]:
    """Run directory → the model name its rows carry in the report (see :func:`rows_by_suite`)."""
    names = {str(run.path): run.model for run in runs}
    for rows in rows_by_suite(runs).values():
        names.update({r.run: r.model for r in rows if r.run})
    return names


def _distinct(rows: list[ResultRow]) -> list[ResultRow]:
    def clashes(name: Callable[[ResultRow], str]) -> bool:
        seen = Counter((name(r), r.condition) for r in rows)
        return any(n > 1 for n in seen.values())

    parts: list[Callable[[ResultRow], str]] = [lambda r: r.model]
    for extra in (lambda r: r.dataset, lambda r: str(r.axes.get("prompt_source", "")), lambda r: Path(r.run).name):
        if not clashes(lambda r: " · ".join(p(r) for p in parts if p(r))):
            break
        if len({extra(r) for r in rows}) > 1:  # only what differs goes into the name
            parts.append(extra)
    if len(parts) == 1:
        return rows
    return [replace(r, model=" · ".join(p(r) for p in parts if p(r))) for r in rows]


def tables(runs: Sequence[LoadedRun]) -> str:
    """One markdown section per suite over all its runs (e.g. several models: the model-scale view),
    headed by a warning where the runs of a suite cover different items.
    """
    return "\n".join(suite_tables(runs).values())


def suite_tables(runs: Sequence[LoadedRun]) -> dict[str, str]:
    """Suite name → its markdown section (:func:`tables` joins them; the HTML page lays them out);
    a suite whose items are aligned translations gets the comparison across languages below its table.
    """
    names = display_names(runs)
    out = {}
    for s, rows in rows_by_suite(runs).items():
        mine = [r for r in runs if r.suite == s]
        across = languages.section([(str(r.path), names[str(r.path)], r.records) for r in mine])
        out[s] = (_in_progress(mine) + _item_set_warning(mine) + _not_interpretable(mine, names)
                  + SUITES.get(s).table(rows)
                  + ("\n" + across if across else "") + _thinking(mine))
    return out


def _not_interpretable(runs: Sequence[LoadedRun], names: Mapping[str, str]) -> str:
    """The note naming the conditions, per model as the table names it, that are not interpretable."""
    return interpretable.note({f"{names[str(r.path)]} · {c}": why for r in runs
                               for c, why in interpretable.reasons(r.records).items()})


def _thinking(runs: Sequence[LoadedRun]) -> str:
    """The thinking sections of the runs that have the thinking axis or conditions scored after
    thinking (empty for the others).
    """
    found = [s for r in runs for s in (thinking.section(SUITES.get(r.suite), r.records, r.model),
                                       after_thinking.section(r.records)) if s]
    return "\n" + "\n".join(found) if found else ""


def _in_progress(runs: Sequence[LoadedRun]) -> str:
    """A line per run not finished (still running, or stopped), so its table is not taken as final."""
    lines = [f"**{r.progress.line}** ({r.path}): metrics so far, not final\n\n" for r in runs
             if r.progress is not None and r.progress.line]
    return "".join(lines)


def _item_set_warning(runs: Sequence[LoadedRun]) -> str:
    # Metrics over different items (another --limit, dataset or failed items) are not comparable.
    if len({r.item_ids for r in runs}) <= 1:
        return ""
    common = frozenset.intersection(*(r.item_ids for r in runs))
    return ("**Runs over different items** (metrics not comparable): "
            + "; ".join(f"{r.path}: {len(r.item_ids)} items, {len(r.item_ids - common)} not in every run"
                        for r in runs) + "\n\n")


def metrics_json(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """``{run_dir: {suite, model, metrics: {condition: metrics}}}`` (``lingdiag report --json``)."""
    return {str(r.path): {"suite": r.suite, "model": r.model, "metrics": {x.condition: x.metrics for x in r.rows}}
            for r in runs}


def load_runs(run_dirs: Sequence[Path]) -> list[LoadedRun]:
    """Every run directory, read and recomputed."""
    return [load_run(Path(d)) for d in run_dirs]
