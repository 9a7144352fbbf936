"""ExpliCa figures as PNG bytes, from result rows (never from a model).

Accuracy by task × shots × decoding (Fig. 3, 8, 9), the rating distributions of models and
people (Fig. 5), Spearman ρ with the human ratings per relation class (Table 13 as a
heatmap), confusion matrices (Fig. 12) and, with models of several sizes, the scale curve
(Fig. 7).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.records import ResultRow
from lingdiag.suites.explica import data
from lingdiag.suites.explica.metrics import ACCURACY, CONFUSION, RATING_DISTRIBUTION, SPEARMAN, of
from lingdiag.suites.explica.prompts import TASKS

MAX_PANELS = 8
"""Confusion matrices and distributions drawn at most (a full grid has 13 conditions per model)."""


def _num(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else math.nan


def _setting(row: ResultRow) -> str:
    """``0-shot greedy``; perplexity (APS) has neither shots nor decoding."""
    return f"{row.axes['shots']}-shot {row.axes['decoding']}" if "shots" in row.axes else "APS"


def accuracy_png(rows: Sequence[ResultRow]) -> bytes:
    """Accuracy per task, one bar per shots × decoding, one panel per model (Fig. 3, 8, 9)."""
    plt = pyplot()
    models = sorted({r.model for r in rows})
    fig, axes = plt.subplots(1, len(models), figsize=(4.8 * len(models), 3.4), squeeze=False, sharey=True)
    settings = sorted({_setting(r) for r in rows})
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, model in zip(axes.flat, models, strict=True):
        cells = {(r.axes.get("task", r.condition), _setting(r)): _num(of(r)[ACCURACY])
                 for r in rows if r.model == model}
        tasks = [t for t in (*TASKS, *sorted({t for t, _ in cells} - set(TASKS))) if any(k[0] == t for k in cells)]
        width = 0.8 / len(settings)
        for k, s in enumerate(settings):
            xs = [t + (k - (len(settings) - 1) / 2) * width for t in range(len(tasks))]
            ax.bar(xs, [cells.get((t, s), math.nan) for t in tasks], width, label=s, color=palette[k % len(palette)])
        ax.axhline(0.25, color="grey", lw=0.8, ls=":")  # chance: one of four connectives
        ax.set_xticks(range(len(tasks)), tasks)
        ax.set_ylim(0, 1.05)
        ax.set_title(model, fontsize=9)
    axes.flat[0].set_ylabel("accuracy (APS for perplexity)")
    axes.flat[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return to_png(fig)


def distributions_png(rows: Sequence[ResultRow]) -> bytes:
    """Model and human rating counts (1-10, and -1 = unreadable) on related and unrelated pairs (Fig. 5)."""
    plt = pyplot()
    rated = [r for r in rows if RATING_DISTRIBUTION in of(r)][:MAX_PANELS]
    fig, axes = plt.subplots(len(rated), 2, figsize=(9, 2.2 * len(rated)), squeeze=False, sharex=True,
                             layout="constrained")
    for (left, right), row in zip(axes, rated, strict=True):
        for ax, subset in ((left, "related"), (right, "unrelated")):
            dist = of(row)[RATING_DISTRIBUTION][subset]
            keys = list(dist["model"])
            model_n, human_n = sum(dist["model"].values()) or 1, sum(dist["human"].values()) or 1
            xs = [int(k) for k in keys]
            ax.bar([x - 0.2 for x in xs], [dist["model"][k] / model_n for k in keys], 0.4, label="model")
            ax.bar([x + 0.2 for x in xs], [dist["human"].get(k, 0) / human_n for k in keys], 0.4, label="humans")
            ax.set_title(f"{row.model} · {row.condition} · {subset}", fontsize=8)
            ax.set_xticks(xs, keys, fontsize=7)
    axes.flat[0].legend(fontsize=7)
    return to_png(fig)


def spearman_png(rows: Sequence[ResultRow]) -> bytes:
    """Spearman ρ of model scores with human mean ratings, per relation class (Table 13)."""
    plt = pyplot()
    scored = [r for r in rows if SPEARMAN in of(r)]
    groups = [*data.CLASSES, data.UNRELATED, "all"]
    values = [[_num(of(r)[SPEARMAN].get(g, {}).get("rho")) for g in groups] for r in scored]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(scored) + 1.2))
    image = ax.imshow(values, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(groups)), [g.replace("_", "\n") for g in groups], fontsize=7)
    ax.set_yticks(range(len(scored)), [f"{r.model} · {r.condition}" for r in scored], fontsize=7)
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if math.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="Spearman ρ")
    return to_png(fig)


def confusion_png(rows: Sequence[ResultRow]) -> bytes:
    """Gold relation class (rows) × predicted class (columns), row-normalised (Fig. 12)."""
    plt = pyplot()
    shown = [r for r in rows if of(r)[CONFUSION]][:MAX_PANELS]
    cols = min(4, len(shown))
    nrows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.2 * nrows), squeeze=False, layout="constrained")
    for ax, row in zip(axes.flat, shown, strict=False):
        confusion = of(row)[CONFUSION]
        gold = [g for g in (*data.CLASSES, data.UNRELATED) if g in confusion]
        predicted = [p for p in (*data.CLASSES, *sorted({p for c in confusion.values() for p in c} - set(data.CLASSES)))
                     if any(p in confusion[g] for g in gold)]
        counts = [[confusion[g].get(p, 0) for p in predicted] for g in gold]
        shares = [[c / (sum(line) or 1) for c in line] for line in counts]
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        for i, line in enumerate(counts):
            for j, c in enumerate(line):
                ax.text(j, i, str(c), ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(predicted)), [p.replace("_", "\n") for p in predicted], fontsize=6)
        ax.set_yticks(range(len(gold)), [g.replace("_", "\n") for g in gold], fontsize=6)
        ax.set_title(f"{row.model} · {row.condition}", fontsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    return to_png(fig)


def scale_png(rows: Sequence[ResultRow]) -> bytes:
    """Accuracy against parameter count, one line per condition (Fig. 7)."""
    plt = pyplot()
    lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.n_params:
            lines[r.condition].append((r.n_params, _num(of(r)[ACCURACY])))
    fig, ax = plt.subplots(figsize=(7, 4))
    for condition, points in sorted(lines.items()):
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, "-o", label=condition)
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("accuracy (APS)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return to_png(fig)


def figures(rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
    """The ExpliCa figures that the rows can support (models are panels or labels, never a coloured
    series, so ``colours`` goes unused).
    """
    out = [Figure("ExpliCa accuracy by task, shots and decoding (Fig. 3, 8, 9)", accuracy_png(rows),
                  "Accuracy over causal and temporal pairs (APS for perplexity); dotted line: chance (1 in 4).")]
    if any(RATING_DISTRIBUTION in of(r) for r in rows):
        out.append(Figure("ExpliCa rating distributions, model vs humans (Fig. 5)", distributions_png(rows),
                          f"Share of each rating; -1 is an unreadable answer. First {MAX_PANELS} rating conditions."))
    if any(SPEARMAN in of(r) for r in rows):
        out.append(Figure("ExpliCa Spearman ρ with human ratings (Table 13)", spearman_png(rows),
                          "Model ratings (or perplexities: a good model correlates negatively) against the human "
                          "mean rating of each sentence, per relation class."))
    if any(of(r)[CONFUSION] for r in rows):
        out.append(Figure("ExpliCa confusion matrices (Fig. 12)", confusion_png(rows),
                          f"Gold class (rows) against predicted class, counts; first {MAX_PANELS} conditions."))
    if len({r.n_params for r in rows if r.n_params}) >= 2:
        out.append(Figure("ExpliCa accuracy by model size (Fig. 7)", scale_png(rows),
                          "Parameter counts as the backends recorded them."))
    return out
