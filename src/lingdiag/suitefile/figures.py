"""A suite file's figures and breakdown tables: what its ``figures`` and ``table.breakdowns``
declare, drawn from the rows' metrics and their ``<metric>_ci95`` intervals (the same intervals
the tables show). Without ``figures`` the table's first metric column and each breakdown are drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.io.markdown import fmt, markdown_table
from lingdiag.records import ResultRow
from lingdiag.suitefile.load import COUNTS
from lingdiag.suitefile.schema import Breakdown, Column, FigureSpec, SuiteFile

MAX_PANELS = 6
"""Conditions drawn as panels of one per-tag figure at most (the rest are in the tables)."""


def _number(x: Any) -> float:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else math.nan


def _interval(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(isinstance(v, int | float) for v in ci):
        return float(ci[0]), float(ci[1])
    return None


def with_interval(value: Any, ci: Any) -> str:
    """A cell: the value and its 95% interval, ``0.62 [0.41, 0.79]`` (the value alone without one)."""
    bounds = _interval(ci)
    return fmt(value) if bounds is None or not isinstance(value, int | float) else \
        f"{fmt(value)} [{bounds[0]:.2f}, {bounds[1]:.2f}]"


def _groups(rows: Sequence[ResultRow], metric: str) -> list[str]:
    return sorted({g for r in rows if isinstance(r.metrics.get(metric), Mapping) for g in r.metrics[metric]})


def breakdown_table(b: Breakdown, by: str, rows: Sequence[ResultRow], row_axes: Sequence[str]) -> str:
    """One breakdown as a markdown section: per tag value as columns (beside the rows' axes and
    model) or as rows (one column per condition and model), each cell with its interval.
    """
    groups = _groups(rows, b.metric)

    def cell(r: ResultRow, g: str) -> str:
        values, cis = r.metrics.get(b.metric) or {}, r.metrics.get(f"{b.metric}_ci95") or {}
        return with_interval(values.get(g), cis.get(g)) if isinstance(cis, Mapping) else fmt(values.get(g))

    if b.layout == "columns":
        header = [*(a.capitalize() for a in row_axes), "Model", *(f"{by} = {g}" for g in groups)]
        body = [[*(str(r.axes.get(a, "")) for a in row_axes), r.model, *(cell(r, g) for g in groups)] for r in rows]
    else:
        header = [by.capitalize(), *(f"{r.model} · {r.condition}" for r in rows)]
        body = [[g, *(cell(r, g) for r in rows)] for g in groups]
    return f"### {b.header or b.metric} by {by}\n\n" + markdown_table(header, body) \
        + "\nEach cell: the value and its 95% Wilson interval.\n"


def declared(spec: SuiteFile) -> list[FigureSpec]:
    """The figures a file declares, or its default ones."""
    if spec.figures is not None:
        return list(spec.figures)
    table = spec.table
    if table is None:
        return []
    first = next((c for c in table.columns if c.metric not in COUNTS), None)
    out = [FigureSpec(metric=first.metric, title=first.header)] if first is not None else []
    return out + [FigureSpec(metric=b.metric, title=b.header) for b in table.breakdowns]


def _name(spec: SuiteFile, f: FigureSpec) -> str:
    """A figure's name for its title and axis: its own title, else the header the table gives its
    metric (a reader sees "Accuracy by polarity", not ``acc_by_polarity``), else the metric key.
    """
    table = spec.table
    named: list[Column | Breakdown] = [] if table is None else [*table.columns, *table.breakdowns]
    headers = [x.header for x in named if x.metric == f.metric and x.header]
    return f.title or next(iter(headers), f.metric)


def _by(spec: SuiteFile, metric: str) -> str | None:
    m = spec.metrics.get(metric)
    return m.share.by if m is not None and m.share is not None else None


def _per_condition(rows: Sequence[ResultRow], metric: str, title: str, colours: ModelColours) -> bytes:
    plt = pyplot()
    conditions = list(dict.fromkeys(r.condition for r in rows))
    models = list(dict.fromkeys(r.model for r in rows))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(conditions) + 2), 3.6), layout="constrained")
    width = 0.7 / max(len(models), 1)
    for k, model in enumerate(models):
        xs, ys, lo, hi = [], [], [], []
        for r in rows:
            if r.model != model:
                continue
            y, ci = _number(r.metrics.get(metric)), _interval(r.metrics.get(f"{metric}_ci95"))
            xs.append(conditions.index(r.condition) - 0.35 + width * (k + 0.5))
            ys.append(y)
            lo.append(y - ci[0] if ci else 0.0)
            hi.append(ci[1] - y if ci else 0.0)
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=3, label=model, color=colours[model])
    ax.set_xticks(range(len(conditions)), conditions, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(title)
    ax.legend(fontsize=7)
    return to_png(fig)


def _per_tag(rows: Sequence[ResultRow], metric: str, by: str, title: str, colours: ModelColours) -> bytes:
    plt = pyplot()
    conditions = list(dict.fromkeys(r.condition for r in rows))[:MAX_PANELS]
    models = list(dict.fromkeys(r.model for r in rows))
    groups = _groups(rows, metric)
    fig, axes = plt.subplots(1, len(conditions), figsize=(3.4 * len(conditions) + 1, 3.4), squeeze=False,
                             sharey=True, layout="constrained")
    width = 0.7 / max(len(models), 1)
    for ax, condition in zip(axes[0], conditions, strict=True):
        for k, model in enumerate(models):
            row = next((r for r in rows if r.model == model and r.condition == condition), None)
            if row is None:
                continue
            values, cis = row.metrics.get(metric) or {}, row.metrics.get(f"{metric}_ci95") or {}
            ys = [_number(values.get(g)) for g in groups]
            bounds = [_interval(cis.get(g)) if isinstance(cis, Mapping) else None for g in groups]
            lo = [y - b[0] if b else 0.0 for y, b in zip(ys, bounds, strict=True)]
            hi = [b[1] - y if b else 0.0 for y, b in zip(ys, bounds, strict=True)]
            ax.errorbar([j - 0.35 + width * (k + 0.5) for j in range(len(groups))], ys, yerr=[lo, hi], fmt="o",
                        capsize=3, label=model, color=colours[model])
        ax.set_xticks(range(len(groups)), groups, fontsize=8)
        ax.set_xlabel(by)
        ax.set_title(condition, fontsize=8)
    axes[0][0].set_ylabel(title)
    axes[0][-1].legend(fontsize=7)
    return to_png(fig)


def figures(spec: SuiteFile, rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
    """The file's figures over ``rows`` (several models: one series each, in the report's ``colours``)."""
    out = []
    legend = colours.legend(r.model for r in rows)
    for f in declared(spec):
        title = _name(spec, f)
        by = _by(spec, f.metric)
        if by is None:
            out.append(Figure(f"{spec.name}: {title} per condition", _per_condition(rows, f.metric, title, colours),
                              "One point per model and condition; bars: the 95% intervals of the table.", legend))
        else:
            out.append(Figure(f"{spec.name}: {title} by {by}", _per_tag(rows, f.metric, by, title, colours),
                              f"One panel per condition (first {MAX_PANELS}); bars: Wilson 95% intervals.", legend))
    return out
