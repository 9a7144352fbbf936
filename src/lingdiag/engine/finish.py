"""The end of a run, written one way: by a run, by ``lingdiag merge`` and by an import.

``finish`` rewrites the records in canonical order and writes ``metrics.json``, ``table.md``
(with its opening lines: the caller's note, the conditions that are not interpretable, the data's
excluded items, fragile decisions, unfinished thinking, failed items, the unparsed answers by
reason and a judge model's readings) and ``meta.json`` last.
Whoever ends a run calls it, so a merged or imported run cannot drift from a run that ended by
itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.metrics import fragile, interpretable, reading
from lingdiag.metrics.core import N_ERRORS, N_UNFINISHED
from lingdiag.reading.summary import stored_summary
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.rundir import Excluded, RunMeta, RunStore
from lingdiag.rundir.state import finished_part
from lingdiag.rundir.summary import Stamp, write_summary
from lingdiag.suite import Suite


@dataclass(frozen=True)
class Ending:
    """What a run's end is computed from, besides its records."""

    order: Sequence[tuple[str, str]]
    """Every (condition, item id) the run records, in the order ``items.jsonl`` holds them."""
    conditions: Sequence[tuple[str, Mapping[str, str]]]
    """Each condition's name and axes, in table order."""
    model: str
    dataset: str
    excluded: Sequence[Excluded] = ()
    """The items of the data left out as not interpretable."""
    note: str = ""
    """The table's first lines (e.g. the items an expander did not score)."""


def imported(records: Sequence[ItemRecord], model: str, dataset: str, excluded: Sequence[Excluded] = ()) -> Ending:
    """The ending of a run directory of answers computed elsewhere (``lingdiag score --out``): its
    conditions as the records name them, its records in the order given.
    """
    conditions = {r.condition: dict(r.axes) for r in records}
    return Ending([(r.condition, r.item_id) for r in records], list(conditions.items()), model, dataset, excluded)


def finish_imported(root: Path, suite: Suite) -> None:
    """End the imported run directory ``root`` (``lingdiag score … --out``, written by
    ``rundir.write_imported``) as a run ends: its records, as written, read back; the model and
    dataset its ``meta.json`` names; the excluded items of that dataset.
    """
    store = RunStore(root)
    meta = store.read_meta()
    model, dataset = str(meta.config["model"]), str(meta.config["dataset"])
    finish(store, suite, imported(store.load_records(), model, dataset, suite.load(dataset).excluded), meta)


def excluded_note(excluded: Sequence[Excluded]) -> str:
    """The table's note on the items of the data left out as not interpretable (empty if none)."""
    if not excluded:
        return ""
    by_reason: dict[str, list[str]] = {}
    for e in excluded:
        by_reason.setdefault(e.reason, []).append(e.item_id)
    return (f"**Excluded items** (not interpretable, never scored): {len(excluded)}; "
            + "; ".join(f"{reason}: {len(ids)} ({', '.join(ids)})" for reason, ids in by_reason.items()) + "\n\n")


def _counted(metrics: Mapping[str, Mapping[str, Any]], key: str, title: str) -> str:
    """A line naming, per condition, how many of its items ``key`` counts (empty if none)."""
    found = {c: m[key] for c, m in metrics.items() if m.get(key)}
    if not found:
        return ""
    return title + "; ".join(f"{c}: {k} of {metrics[c]['n']}" for c, k in found.items()) + "\n\n"


def finish(store: RunStore, suite: Suite, ending: Ending, meta: RunMeta) -> tuple[dict[str, Any], str]:
    """Rewrite the records in ``ending.order``; write ``metrics.json``, ``table.md`` and ``meta``.

    Returns:
        The metrics per condition and the table.
    """
    records = store.finalize(ending.order)
    scored: dict[str, dict[str, Any]] = {}  # the suite's metrics, counted once: metrics.json's and the summary's
    metrics: dict[str, Any] = {}
    for name, _ in ending.conditions:
        rs = [r for r in records if r.condition == name]
        if rs:
            scored[name] = suite.condition_metrics(rs)
            # Fragile counts exist only where records carry decisions (reduced-precision runs).
            metrics[name] = scored[name] | fragile.counts([r.decision for r in rs])
    end = finished_part(store, records)
    table = suite.tables([ResultRow(ending.model, name, dict(axes), metrics[name], str(store.root), ending.dataset)
                         for name, axes in ending.conditions if name in metrics])
    # Failed items first, never let an outage pass for a result; unfinished thinking beside unparsed,
    # never folded into it.
    table = (ending.note + interpretable.note(interpretable.reasons(records)) + excluded_note(ending.excluded)
             + fragile.table_note(metrics)
             + _counted(metrics, N_ERRORS, "**Failed items** (backend errors; every metric is over the answered "
                                           "items only): ")
             + _counted(metrics, N_UNFINISHED, "**Unfinished thinking** (the trace never closed; no answer was "
                                               "read): ")
             + reading.table_note({name: [r for r in records if r.condition == name]
                                   for name, _ in ending.conditions if name in metrics})
             + table)
    store.write_json("metrics.json", metrics)
    store.write_text("table.md", table)
    # What every reader of the run's numbers reads (lingdiag.reading), keyed by the records' digest; a
    # directory that cannot take it gets it on its first read.
    write_summary(store, stored_summary(records, suite, end["sha256"], Stamp.of(store.items_path),
                                        scored))
    # Last, and with ``finished``: a run killed before this line is not finished (rundir.state).
    store.write_meta(meta.replaced(planned=None, finished=end))
    return metrics, table
