"""The study report's "Learning curves" section: per model with checkpoints and cell, accuracy at each
checkpoint (those not measured among them, with why), the figure of each model's curves, and what each
curve says of the effect's onset and stability (``across.ONSET_RULE``), no more than its missing
checkpoints allow.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from lingdiag import figures as figs
from lingdiag.figures import Figure
from lingdiag.io.markdown import markdown_table
from lingdiag.study import across
from lingdiag.study.across import ONSET_RULE, Missing
from lingdiag.study.sections import NAMED, Drawn, StudySection, ci, missing_line, register, some

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def _onset_sentence(found: across.Onset) -> str:
    """What a curve says of the effect, and no more than its missing checkpoints allow."""
    def named(points: Sequence[across.CurvePoint]) -> str:
        return some([p.checkpoint for p in points])

    if found.first is None:
        if not found.before:
            return "never appears"
        return (f"is not present at any measured checkpoint; {named(found.before)} not measured, so whether it "
                "appears is not known")
    if found.before:
        text = (f"is present at {found.first.checkpoint}, where it may not first appear ({named(found.before)} "
                "before it not measured)")
    else:
        text = f"first appears at {found.first.checkpoint}"
    if found.stable is None:
        return text + f"; whether it is stable after it is not known ({named(found.after)} not measured)"
    return text + f" and is {'stable' if found.stable else 'not stable'} after it"


def _curves(study: Study) -> Drawn:
    """The learning-curve tables (checkpoints not measured among them, with why), their figures and the
    findings they support (:func:`_onset_sentence`).
    """
    parts, found = [], []
    curves = study.curves
    for (model, cell), points in curves.items():
        body = [[p.checkpoint, "" if p.step is None else p.step, "" if p.tokens is None else f"{p.tokens:g}",
                 "–" if p.missing else f"{p.accuracy.value:.3f}", "–" if p.missing else ci(p.accuracy),
                 p.accuracy.n, f"{p.chance:.3f}", p.missing or ("yes" if p.present else "no")] for p in points]
        found.append(f"Learning curve of {model} on {cell[0]} {cell[1]}: the effect "
                     f"{_onset_sentence(across.onset(points))}.")
        parts.append(f"### {model}: {cell[0]}, {cell[1]}\n\n" + markdown_table(
            ["Checkpoint", "Step", "Tokens", "Accuracy", "95% CI", "n", "Chance", "Above chance"], body)
            + f"\n{found[-1]}\n")
    drawn = {(model, cell[0]) for model, cell in curves}
    for (model, suite), gone in _grouped(g for g in study.missing if g.entry.model.base is not None).items():
        if (model, suite) not in drawn:
            found.append(f"Learning curve of {model} on {suite}: no checkpoint measured ({missing_line(gone)}).")
            parts.append(f"### {model}: {suite}\n\n{found[-1]}\n")
    if not parts:
        return Drawn("No model of the study has checkpoints.\n")
    return Drawn("\n".join(parts) + f"\nRule: {ONSET_RULE}.\n", curve_figures(curves), found)


def _grouped(missing: Iterable[Missing]) -> dict[tuple[str, str], list[Missing]]:
    """(model a checkpoint belongs to, suite) → its checkpoints not measured."""
    out: dict[tuple[str, str], list[Missing]] = defaultdict(list)
    for g in missing:
        out[(str(g.entry.model.base), g.entry.suite)].append(g)
    return dict(out)


def curve_figures(curves: Mapping[tuple[str, across.Cell], Sequence[across.CurvePoint]]) -> list[Figure]:
    """Accuracy against step (or tokens) per model with checkpoints: one line per cell, 95% bars, and each
    cell's chance level as a dashed line; a checkpoint not measured breaks the line and is marked where it
    would sit, and named in the caption.
    """
    if not curves or not figs.available():
        return []
    plt = figs.pyplot()
    out = []
    for model in dict.fromkeys(m for m, _ in curves):
        fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
        gaps: dict[str, tuple[float, str]] = {}
        chances = set()
        for (m, cell), points in curves.items():
            if m != model:
                continue
            xs = [p.step if p.step is not None else (p.tokens or 0.0) for p in points]
            ys = [math.nan if p.missing else p.accuracy.value for p in points]  # NaN: the line breaks there
            err = [[0.0 if p.missing else y - p.accuracy.ci95[0] for y, p in zip(ys, points, strict=True)],
                   [0.0 if p.missing else p.accuracy.ci95[1] - y for y, p in zip(ys, points, strict=True)]]
            ax.errorbar(xs, ys, yerr=err, fmt="-o", capsize=3, label=f"{cell[0]} {cell[1]}")
            chances.add(points[0].chance)
            gaps.update({f"{p.checkpoint} ({p.missing})": (x, p.checkpoint)  # the tables say which cell
                         for x, p in zip(xs, points, strict=True) if p.missing})
        for chance in sorted(chances):
            ax.axhline(chance, color="#777777", linestyle="--", linewidth=1,
                       label=f"chance ({chance:.2f})" if len(chances) > 1 else "chance")
        marks = dict.fromkeys(gaps.values())
        for x, name in marks:
            ax.axvline(x, color="#999", linestyle=":", linewidth=1)
            if len(marks) <= NAMED:  # more names than that would cover the curve: the caption counts them
                ax.annotate(f"{name}: not measured", (x, 0.02), xycoords=("data", "axes fraction"), rotation=90,
                            fontsize=6, color="#666", va="bottom", ha="right")
        ax.set_xlabel("training step (tokens where no step is given)")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=6)
        caption = "Accuracy at each checkpoint; bars: 95% Wilson intervals; dashed: chance (1 / the number of labels)."
        if gaps:
            caption += f" Not measured (dotted, the line broken there): {some(list(gaps))}."
        out.append(Figure(f"{model}: learning curve", figs.to_png(fig), caption))
    return out



register(StudySection("study-curves", "Learning curves", 30, _curves))
