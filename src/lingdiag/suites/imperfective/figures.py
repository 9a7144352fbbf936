"""ImperfectiveNLI figures as PNG bytes, from result rows (never from a model).

Group accuracy per strategy (Table 3 as bars), the prompt trade-off (§5.2, Figure 1) and
the telic verb classes (§5.4, Figure 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.records import ResultRow
from lingdiag.suites.imperfective.analysis import by_model, prompt_tradeoff
from lingdiag.suites.imperfective.data import TELIC_CLASSES
from lingdiag.suites.imperfective.metrics import ACC, BY_CLASS, CLASS_METRICS, GROUPS
from lingdiag.suites.imperfective.prompts import STRATEGIES


def _nan(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else math.nan


def _ordered(conditions: Sequence[str]) -> list[str]:
    """The paper's strategy order first, then anything else alphabetically."""
    return sorted(conditions, key=lambda c: (STRATEGIES.index(c) if c in STRATEGIES else len(STRATEGIES), c))


def group_accuracy_png(rows: Sequence[ResultRow]) -> bytes:
    """Accuracy on groups A-D, one bar per strategy, one panel per model (Table 3 as bars)."""
    plt = pyplot()
    models = by_model(rows)
    cols = min(3, len(models))
    nrows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), squeeze=False, sharey=True)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    everywhere = _ordered(sorted({c for conds in models.values() for c in conds}))
    colour = {c: palette[k % len(palette)] for k, c in enumerate(everywhere)}  # same strategy, same colour
    for ax, (model, conds) in zip(axes.flat, sorted(models.items()), strict=False):
        names = _ordered(list(conds))
        width = 0.8 / len(names)
        for k, c in enumerate(names):
            xs = [g + (k - (len(names) - 1) / 2) * width for g in range(4)]
            ax.bar(xs, [_nan(conds[c][ACC[g]]) for g in GROUPS], width, label=c, color=colour[c])
        ax.set_xticks(range(4), [f"Acc {g}" for g in "ABCD"])
        ax.set_ylim(0, 1.05)
        ax.set_title(model, fontsize=9)
    for ax in list(axes.flat)[len(models):]:
        ax.set_visible(False)
    legend: dict[str, Any] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", bbox_to_anchor=(0.5, 1.0),
               ncol=max(1, len(legend)), fontsize=8)
    return to_png(fig)


def _legend_r(label: str, corr: Any) -> str:
    return label if corr is None else f"{label} (r = {corr.r:.2f}, p = {corr.p:.2f})"


def tradeoff_png(rows: Sequence[ResultRow], colours: ModelColours) -> bytes:
    """Acc C (solid) and Acc D (dashed) across strategies, one colour per model (Figure 1)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    marked: set[str] = set()
    for t in prompt_tradeoff(rows):
        xs = [STRATEGIES.index(s) for s in t.strategies]
        colour = colours[t.model]
        ax.plot(xs, t.acc_c, "-o", color=colour, label=_legend_r(f"{t.model} Acc C", t.corr_c))
        ax.plot(xs, t.acc_d, "--s", color=colour, label=_legend_r(f"{t.model} Acc D", t.corr_d))
        # A strategy the report calls not interpretable: a hollow grey ring over its points, out of r.
        bad = [j for j, s in enumerate(t.strategies) if s in t.not_interpretable]
        for ys in (t.acc_c, t.acc_d):
            ax.plot([xs[j] for j in bad], [ys[j] for j in bad], "o", markersize=13, markerfacecolor="none",
                    markeredgecolor="#888888")
        marked.update(t.not_interpretable)
    ax.set_xticks(range(len(STRATEGIES)), [s + ("\n(not interpretable)" if s in marked else "") for s in STRATEGIES])
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return to_png(fig)


def verb_class_strategies(rows: Sequence[ResultRow]) -> list[str]:
    """The strategies with a verb-class value for some model: a panel for each, none left empty
    (a log-likelihood condition or a sample without telic items has no breakdown).
    """
    present: set[str] = set()
    for conds in by_model(rows).values():
        for c, m in conds.items():
            table = m.get(BY_CLASS) or {}
            if any(not math.isnan(_nan(v)) for key in CLASS_METRICS for v in (table.get(key) or {}).values()):
                present.add(c)
    return _ordered(sorted(present))


def verb_class_png(rows: Sequence[ResultRow]) -> bytes:
    """Acc A, Acc C and TBR_C per telic verb class, averaged over models, per strategy (Figure 3)."""
    plt = pyplot()
    models = by_model(rows)
    strategies = verb_class_strategies(rows)
    fig, axes = plt.subplots(1, len(strategies), figsize=(4.5 * len(strategies), 3.4), squeeze=False, sharey=True)
    keys = tuple(zip(CLASS_METRICS, ("Acc A", "Acc C", "TBR_C"), strict=True))
    for ax, s in zip(axes.flat, strategies, strict=True):
        tables = [conds[s][BY_CLASS] for conds in models.values() if s in conds]
        for k, (key, label) in enumerate(keys):
            means = []
            for cls in TELIC_CLASSES:
                vals = [_nan(t[key].get(cls)) for t in tables]
                vals = [v for v in vals if not math.isnan(v)]
                means.append(sum(vals) / len(vals) if vals else math.nan)
            ax.bar([c + (k - 1) * 0.27 for c in range(len(TELIC_CLASSES))], means, 0.27, label=label)
        ax.set_xticks(range(len(TELIC_CLASSES)), [c.replace("_", "\n", 1).replace("_", " ") for c in TELIC_CLASSES],
                      fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{s} (mean of {len(tables)} model{'s' * (len(tables) != 1)})", fontsize=9)
        ax.legend(fontsize=7)
    return to_png(fig)


def figures(rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
    """The ImperfectiveNLI figures.

    Group accuracy, the prompt trade-off (with ≥ 2 strategies of one model, in the report's
    ``colours``) and the telic verb classes.
    """
    figures = [Figure("Accuracy by group (Table 3)", group_accuracy_png(rows),
                      "Accuracy on groups A-D per prompt strategy; one panel per model.")]
    if tradeoffs := prompt_tradeoff(rows):
        figures.append(Figure("Prompt trade-off (§5.2, Figure 1)", tradeoff_png(rows, colours),
                              "Acc C (solid) and Acc D (dashed) from zero-shot to counterfactual; Pearson r "
                              "against the strategy index over the interpretable strategies (needs ≥ 3); a "
                              "strategy at least half unparsed or failed is ringed, named not interpretable "
                              "and left out of r.", colours.legend(t.model for t in tradeoffs)))
    if verb_class_strategies(rows):
        figures.append(Figure("Telic verb classes (§5.4, Figure 3)", verb_class_png(rows),
                              "Acc A, Acc C and TBR_C per telic verb class, averaged over models (a strategy "
                              "without telic items has no panel)."))
    return figures
