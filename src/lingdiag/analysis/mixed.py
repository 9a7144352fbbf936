"""Item and model variance together: a mixed-effects logistic regression of correctness.

``correct ~ condition + (1 | item) + (1 | model)`` over the records of several runs: the
condition effects (log-odds against a baseline condition) are estimated while items that are
hard for every model, and models that are weak on every item, are accounted for, as a
psycholinguist would analyse the same data. The simple paired tests of :mod:`lingdiag.analysis.compare`
treat items as independent and look at one model at a time.

statsmodels' ``BinomialBayesMixedGLM`` fitted by variational Bayes (``fit_vb``) is the
estimator: deterministic, fast on tens of thousands of records, and part of the ``stats``
extra. Intervals are the posterior mean ± 1.96 posterior SD of the variational approximation;
the method is named beside every number it gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.metrics.interpretable import reasons
from lingdiag.reading import records_of
from lingdiag.records import ItemRecord
from lingdiag.rundir import RunStore

METHOD = ("statsmodels BinomialBayesMixedGLM, variational Bayes (fit_vb); 95% interval: posterior mean ± 1.96 SD; "
          "random intercepts for items and (with ≥ 2 models) models")


@dataclass(frozen=True, slots=True)
class FixedEffect:
    """One condition's effect against the baseline condition, in log-odds of a correct answer."""

    condition: str
    estimate: float
    sd: float
    """Posterior SD."""
    ci95: tuple[float, float]

    @property
    def odds_ratio(self) -> float:
        """``exp(estimate)``: how many times the odds of a right answer are the baseline's."""
        return math.exp(self.estimate)


@dataclass(frozen=True, slots=True)
class MixedModel:
    """The fitted model."""

    formula: str
    n: int
    """Records with a gold label and no backend error."""
    n_items: int
    n_models: int
    baseline: str
    intercept: float
    effects: list[FixedEffect]
    random_sd: dict[str, float]
    """Posterior mean of each random intercept's standard deviation (``item``, ``model``)."""
    not_interpretable: dict[str, str] = field(default_factory=dict)
    """Condition → which models' answers under it are not interpretable, and why
    (:mod:`lingdiag.metrics.interpretable`): an effect against or of such a condition measures the
    parser or a constant answer."""
    method: str = METHOD

    def note(self, condition: str) -> str:
        """The flag of ``condition``'s effect row: its own and the baseline's reasons (empty when none)."""
        parts = [f"{c}: {self.not_interpretable[c]}" for c in dict.fromkeys((condition, self.baseline))
                 if c in self.not_interpretable]
        return "not interpretable: " + "; ".join(parts) if parts else ""


def _frame(records: Mapping[str, Sequence[ItemRecord]]) -> Any:
    import pandas as pd

    rows = [(int(bool(r.correct)), r.condition, r.item_id, model)
            for model, rs in records.items() for r in rs if r.correct is not None and r.error is None]
    return pd.DataFrame(rows, columns=["correct", "condition", "item", "model"])


def fit(records: Mapping[str, Sequence[ItemRecord]], baseline: str | None = None) -> MixedModel:
    """Fit ``correct ~ condition + (1 | item) + (1 | model)``.

    Args:
        records: Model name → its records (the conditions are shared across models).
        baseline: The reference condition; the first one seen when None.

    Returns:
        The condition effects and the random intercepts' SDs.
    """
    flags: dict[str, list[str]] = {}
    for name, rs in records.items():
        for condition, why in reasons(rs).items():
            flags.setdefault(condition, []).append(f"{name} {why}")
    return fit_frame(_frame(records), baseline, {c: ", ".join(v) for c, v in flags.items()})


def fit_frame(df: Any, baseline: str | None = None, not_interpretable: Mapping[str, str] | None = None) -> MixedModel:
    """:func:`fit` on a frame already built: one row per graded answer, columns ``correct`` (0 or 1),
    ``condition``, ``item`` and ``model`` (a study builds it from its runs' columns, never from records).

    Args:
        df: The pandas DataFrame.
        baseline: The reference condition; the first one seen when None.
        not_interpretable: Condition → which models' answers under it are not interpretable, and why.
    """
    try:
        from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM
    except ModuleNotFoundError:
        raise MissingDependency("lingdiag mixed", "stats", ["statsmodels"]) from None
    conditions = [str(c) for c in dict.fromkeys(df["condition"])]
    if len(conditions) < 2:
        raise ConfigError("a mixed model needs at least two conditions; the runs have "
                          f"{', '.join(conditions) or 'none'}")
    baseline = baseline or conditions[0]
    if baseline not in conditions:
        raise ConfigError(f"--baseline {baseline!r} is not a condition of these runs: {', '.join(conditions)}")
    if df["correct"].nunique() < 2:
        raise ConfigError("every answer is right (or every one wrong): there is no variance to model")
    fixed = f"correct ~ C(condition, Treatment(reference={baseline!r}))"
    random = {"item": "0 + C(item)"}
    if df["model"].nunique() >= 2:
        random["model"] = "0 + C(model)"
    model = BinomialBayesMixedGLM.from_formula(fixed, random, df)
    result = model.fit_vb()
    names = list(model.exog_names)
    effects = []
    for k, name in enumerate(names[1:], start=1):
        level = name.rsplit("[T.", 1)[1].rstrip("]")
        mean, sd = float(result.fe_mean[k]), float(result.fe_sd[k])
        effects.append(FixedEffect(level, mean, sd, (mean - 1.96 * sd, mean + 1.96 * sd)))
    # vcp_mean holds the log standard deviations of the variance components, in vc_formulas order.
    random_sd = {name: float(math.exp(v)) for name, v in zip(model.vcp_names, result.vcp_mean, strict=True)}
    formula = "correct ~ condition + (1 | item)" + (" + (1 | model)" if "model" in random else "")
    return MixedModel(formula, len(df), int(df["item"].nunique()), int(df["model"].nunique()), baseline,
                      float(result.fe_mean[0]), effects, random_sd, dict(not_interpretable or {}))


def load(runs: Sequence[Path]) -> dict[str, list[ItemRecord]]:
    """Model name → records, for the runs given (a model in two runs gets the run directory in its name)."""
    out: dict[str, list[ItemRecord]] = {}
    for run in runs:
        store = RunStore(run)
        name = store.read_meta().model
        out[f"{name} · {Path(run).name}" if name in out else name] = records_of(run)
    return out
