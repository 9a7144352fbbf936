"""CxNLI figures as PNG bytes, from result rows (never from a model).

Accuracy per construction in Exp 1 and Exp 2 (Figure 1) and per-label F1 (Tables 8-15).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.records import ResultRow
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli.metrics import of

MAX_PANELS = 6
"""Settings drawn at most (prompt variants × settings × CoT multiply quickly)."""


def _num(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else math.nan


def _setting(row: ResultRow) -> str:
    """The condition without its experiment: ``zero/v1``, ``three-cxnli/v1/cot``."""
    return row.condition.split("/", 1)[1] if row.condition.startswith("exp") else row.condition


def construction_png(rows: Sequence[ResultRow]) -> bytes:
    """Accuracy per construction, Exp 1 beside Exp 2, one panel per model × setting (Figure 1)."""
    plt = pyplot()
    panels: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(dict)
    for r in rows:
        panels[(r.model, _setting(r))][str(r.axes.get("exp", ""))] = of(r)["by_construction"]
    shown = sorted(panels.items())[:MAX_PANELS]
    fig, axes = plt.subplots(len(shown), 1, figsize=(10, 2.8 * len(shown)), squeeze=False,
                             layout="constrained")  # rotated construction names clear the next panel
    for ax, ((model, setting), exps) in zip(axes.flat, shown, strict=True):
        constructions = sorted({c for accs in exps.values() for c in accs})
        width = 0.8 / max(1, len(exps))
        for k, (exp, accs) in enumerate(sorted(exps.items())):
            xs = [c + (k - (len(exps) - 1) / 2) * width for c in range(len(constructions))]
            ax.bar(xs, [_num(accs.get(c)) for c in constructions], width, label=f"Exp {exp}")
        ax.axhline(1 / 3, color="grey", lw=0.8, ls=":")  # chance: one of three labels
        ax.set_xticks(range(len(constructions)), constructions, rotation=45, ha="right", fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{model} · {setting}", fontsize=9)
        ax.legend(fontsize=7)
    return to_png(fig)


def label_f1_png(rows: Sequence[ResultRow]) -> bytes:
    """F1 per gold label, one group of bars per condition."""
    plt = pyplot()
    shown = [r for r in rows if of(r)["by_label"]]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(shown) + 2), 3.6))
    width = 0.8 / len(data.LABELS)
    for k, label in enumerate(data.LABELS):
        xs = [i + (k - (len(data.LABELS) - 1) / 2) * width for i in range(len(shown))]
        scores = [of(r)["by_label"].get(label) for r in shown]
        ax.bar(xs, [_num(s["f1"] if s else None) for s in scores], width, label=label)
    ax.set_xticks(range(len(shown)), [f"{r.model}\n{r.condition}" for r in shown], rotation=45, ha="right",
                  fontsize=6)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1")
    ax.legend(fontsize=7)
    return to_png(fig)


def figures(rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
    """The CxNLI figures (none draws a series per model, so ``colours`` goes unused)."""
    return [Figure("CxNLI accuracy per construction, Exp 1 vs Exp 2 (Figure 1)", construction_png(rows),
                   f"Dotted line: chance (1 in 3). First {MAX_PANELS} model × setting panels."),
            Figure("CxNLI F1 per label", label_f1_png(rows), "Unparsed answers count as wrong.")]
