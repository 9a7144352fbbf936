"""The study report's "Agreement between models" section: per cell, pairwise Cohen's kappa beside the raw
agreement, and each model's labels' prevalence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.stats import whole_percents
from lingdiag.study import across
from lingdiag.study.sections import Drawn, StudySection, register

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study

AGREEMENT_MODELS = 40
"""Models in an agreement matrix (its cells grow with their square); the study's first ones in its order."""

def _agreed(x: across.Agreement) -> str:
    """Kappa, then the raw agreement: ``0.41 (25/30)``."""
    return f"{'–' if x.kappa is None else f'{x.kappa:.2f}'} ({x.agree}/{x.n})"


def _shares(counts: Sequence[tuple[str, int]]) -> str:
    """``True 23 (58%), False 17 (42%)``: exact counts, with shares that sum to 100 (``whole_percents``)."""
    return ", ".join(f"{label} {n} ({pct}%)" for (label, n), pct in
                     zip(counts, whole_percents([n for _, n in counts]), strict=True))


def _agreement(study: Study) -> Drawn:
    """Per cell, pairwise Cohen's kappa beside the raw agreement, and each model's labels' prevalence."""
    parts = []
    for cell, table in study.tables.items():
        if len(table.models) < 2:
            continue
        shown = table if len(table.models) <= AGREEMENT_MODELS else across.CellTable(
            table.cell, table.models[:AGREEMENT_MODELS], table.items, table.outcome[:, :AGREEMENT_MODELS],
            table.label[:, :AGREEMENT_MODELS])
        k = across.agreement(shown)
        names = shown.models
        body = [[a, *(_agreed(k[(a, b)]) for b in names), _shares(across.prevalence(table, a, study.labels))]
                for a in names]
        parts.append(f"### Agreement: {cell[0]}, {cell[1]}\n\n" + markdown_table(["Model", *names, "Labels"], body)
                     + (f"\nThe first {AGREEMENT_MODELS} of {len(table.models)} models, in the study's order.\n"
                        if shown is not table else ""))
    note = ("\nEach cell: Cohen's kappa between two models' labels (UNPARSED is a label), then the raw agreement "
            "(items given the same label / items both answered without a backend error); – where chance "
            "agreement is total. Labels: each model's labels, the items each takes and their share (whole "
            "percents from the exact counts by largest remainder, so a row sums to 100%). Kappa is "
            "near 0 when one model gives nearly one label, however often the two agree: read it beside the raw "
            "agreement and the labels' prevalence.\n")
    return Drawn(("\n".join(parts) + note) if parts else "Agreement needs two models on a condition.\n")


register(StudySection("study-agreement", "Agreement between models", 90, _agreement))
