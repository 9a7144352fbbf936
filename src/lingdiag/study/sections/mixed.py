"""The study report's "Mixed model over all models" section: ``correct ~ condition + (1 | item) +
(1 | model)`` per suite, on a seeded sample of items above :data:`MIXED_RECORDS` answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lingdiag.analysis import mixed
from lingdiag.errors import LingdiagError
from lingdiag.io.limits import Limit
from lingdiag.io.markdown import markdown_table
from lingdiag.reading.summary import NOT_GRADED, RIGHT
from lingdiag.study.across import StudyRun
from lingdiag.study.sections import Drawn, StudySection, register

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study

MIXED_RECORDS = Limit("LINGDIAG_STUDY_MIXED_RECORDS", 5000, "graded answers per suite in the study's mixed model")
"""Above this, the mixed model is fitted on a seeded sample of items (every model's answers on them):
statsmodels' variational fit takes about a minute per 10,000 answers on a 2-core machine."""


def mixed_frame(runs: Sequence[StudyRun], seed: int = 0) -> tuple[object, str]:
    """The graded answers of ``runs`` as ``mixed.fit_frame``'s frame (item codes, not ids), sampled by item
    (seeded) to at most :data:`MIXED_RECORDS` answers before the frame is built; and a sentence naming the
    sample where one was drawn.
    """
    import pandas as pd

    graded = [s.summary.columns.outcome != NOT_GRADED for s in runs]
    total = int(sum(g.sum() for g in graded))
    keep = graded
    sampled = ""
    bound = int(MIXED_RECORDS.value)
    if total > bound:
        items = np.unique(np.concatenate([s.summary.columns.item[g] for s, g in zip(runs, graded, strict=True)]))
        n = max(int(len(items) * bound / total), 1)
        chosen = np.random.default_rng(seed).choice(items, size=n, replace=False)
        keep = [g & np.isin(s.summary.columns.item, chosen) for s, g in zip(runs, graded, strict=True)]
        answers = int(sum(k.sum() for k in keep))
        sampled = (f"Fitted on a seeded sample of {n} of {len(items)} items (seed {seed}; every model's answers on "
                   f"them: {answers} of {total}); {MIXED_RECORDS.how_to_raise()}.")
    parts = []
    for s, k in zip(runs, keep, strict=True):
        c = s.summary.columns
        parts.append(pd.DataFrame({"correct": (c.outcome[k] == RIGHT).astype(int),
                                   "condition": np.array(s.summary.vocab.conditions.names, dtype=object)[
                                       c.condition[k]],
                                   "item": c.item[k], "model": s.label}))
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["correct", "condition", "item",
                                                                                 "model"])
    return df, sampled


def _mixed(study: Study) -> Drawn:
    """``correct ~ condition + (1 | item) + (1 | model)`` per suite over every model."""
    parts = []
    for suite in dict.fromkeys(s.entry.suite for s in study.runs):
        members = [s for s in study.runs if s.entry.suite == suite]
        flags: dict[str, list[str]] = {}
        for s in members:
            for condition, why in s.summary.not_interpretable.items():
                flags.setdefault(condition, []).append(f"{s.label} {why}")
        df, sampled = mixed_frame(members, study.seed)
        try:
            fitted = mixed.fit_frame(df, None, {c: ", ".join(v) for c, v in flags.items()})
        except LingdiagError as e:
            parts.append(f"- {suite}: not fitted: {e}")
            continue
        rows = [[suite, e.condition, fitted.baseline, f"{e.estimate:+.3f}", f"{e.odds_ratio:.2f}",
                 f"[{e.ci95[0]:+.3f}, {e.ci95[1]:+.3f}]"] for e in fitted.effects]
        parts.append(markdown_table(["Suite", "Condition", "Baseline", "Log-odds", "Odds ratio", "95% CI"], rows)
                     + f"\n{fitted.formula}; {fitted.n} records, {fitted.n_items} items, {fitted.n_models} models."
                     + (f" {sampled}" if sampled else "") + "\n")
    return Drawn("\n".join(parts) + "\n" if parts else "No finished run to fit.\n")


register(StudySection("study-mixed", "Mixed model over all models", 60, _mixed))
