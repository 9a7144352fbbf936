"""The budget-sweep figure: a suite's headline metric and the ``unfinished`` rate against the thinking
budget, for runs whose thinking axis holds at least two ``budget:N`` settings.

One line per model and per the condition's other axes (``strategy zero-shot``); ``off`` is drawn
at budget 0 where the run has it. Other settings (``on``, ``on:N``, ``effort:X``) set no budget the
model was held to, so they are not points of the sweep.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from lingdiag.conditions.thinking import AXIS
from lingdiag.errors import ConfigError
from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.metrics.core import UNFINISHED_RATE
from lingdiag.records import ResultRow
from lingdiag.thinking import Thinking

LOG_SPAN = 10
"""Budgets spanning this factor or more are drawn on a log axis."""


@dataclass(frozen=True, slots=True)
class BudgetPoint:
    """One condition of the sweep: its budget, the headline metric with its interval, the unfinished rate."""

    model: str
    line: str
    """The model and the condition's other axes that vary in the sweep (``thinker: strategy zero-shot``)."""
    budget: int
    """Thinking tokens the block was closed after; 0 for ``off``."""
    value: float | None
    """The headline metric (None where the condition has no finite value)."""
    ci95: tuple[float, float] | None
    unfinished_rate: float


def _budget(setting: str) -> int | None:
    """The budget of an axis value: N for ``budget:N``, 0 for ``off``, None for the others."""
    try:
        parsed = Thinking.parse(setting)
    except ConfigError:
        return None
    return {"off": 0, "budget": parsed.budget}.get(parsed.mode)


def _line(row: ResultRow, varying: set[str]) -> str:
    rest = ", ".join(f"{k} {v}" for k, v in sorted(row.axes.items()) if k in varying)
    return f"{row.model}: {rest}" if rest else row.model


def budget_points(metric: str, rows: Sequence[ResultRow]) -> list[BudgetPoint]:
    """The sweep's points of ``metric`` over one suite's rows, by line then budget; empty unless the
    rows hold at least two ``budget:N`` settings.

    A condition with no unfinished rate in its metrics had no record that thought, so none unfinished.
    """
    found = [(b, r) for r in rows if AXIS in r.axes and (b := _budget(str(r.axes[AXIS]))) is not None]
    if len({b for b, _ in found if b > 0}) < 2:
        return []
    # Only the other axes that tell the sweep's conditions apart name a line (not prompt_source authors).
    varying = {k for _, r in found for k in r.axes if k != AXIS and len({x.axes.get(k) for _, x in found}) > 1}
    out = []
    for budget, row in found:
        raw, ci = row.metrics.get(metric), row.metrics.get(f"{metric}_ci95")
        value = float(raw) if isinstance(raw, int | float) and math.isfinite(raw) else None
        bounds = (float(ci[0]), float(ci[1])) if value is not None and isinstance(ci, list | tuple) and \
            len(ci) == 2 and all(isinstance(v, int | float) for v in ci) else None
        out.append(BudgetPoint(row.model, _line(row, varying), budget, value, bounds,
                               float(row.metrics.get(UNFINISHED_RATE, 0.0))))
    return sorted(out, key=lambda p: (p.line, p.budget))


def budget_figure(suite: str, metric: str, rows: Sequence[ResultRow], colours: ModelColours) -> Figure | None:
    """The figure, or None where the rows are no budget sweep or the suite names no headline metric.

    A model's lines take its colour in the report's ``colours``; its conditions differ by line style.
    """
    found = budget_points(metric, rows) if metric else []
    if not found:
        return None
    plt = pyplot()
    budgets = sorted({p.budget for p in found})
    positive = [b for b in budgets if b > 0]
    lines: dict[str, list[BudgetPoint]] = defaultdict(list)
    for p in found:
        lines[p.line].append(p)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.4), layout="constrained")
    styles = ("-", "--", ":", "-.")
    for line, members in lines.items():
        model = members[0].model
        style = styles[[x for x in lines if lines[x][0].model == model].index(line) % len(styles)]
        valued = [p for p in members if p.value is not None]
        lo = [p.value - p.ci95[0] if p.value is not None and p.ci95 else 0.0 for p in valued]
        hi = [p.ci95[1] - p.value if p.value is not None and p.ci95 else 0.0 for p in valued]
        left.errorbar([p.budget for p in valued], [p.value for p in valued], yerr=[lo, hi], fmt="o", ls=style,
                      capsize=3, color=colours[model], label=line)
        right.plot([p.budget for p in members], [p.unfinished_rate for p in members], "o", ls=style,
                   color=colours[model])
    logged = positive[-1] / positive[0] >= LOG_SPAN
    for ax in (left, right):
        if logged:  # symlog: linear below the smallest budget, so off (0) still has a place
            ax.set_xscale("symlog", linthresh=positive[0])
        ax.set_xticks(budgets, ["off" if b == 0 else str(b) for b in budgets], fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("thinking budget (tokens)")
    left.set_ylabel(metric)
    right.set_ylabel("unfinished rate")
    right.set_ylim(-0.02, 1.02)
    left.legend(fontsize=7)
    return Figure(f"{suite}: {metric} by thinking budget", to_png(fig),
                  "Left: the headline metric at each budget:N setting (off at 0), one line per model and "
                  "condition; bars: 95% intervals where the metric has them. Right: the share of items whose "
                  f"thinking never closed. {'Symmetric log' if logged else 'Linear'} budget axis.",
                  colours.legend(p.model for p in found))
