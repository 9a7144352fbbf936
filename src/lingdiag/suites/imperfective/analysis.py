"""ImperfectiveNLI analyses over several runs (paper §5.2, §5.3 and footnote 4 of §5.4).

Pure functions over ``(model, condition, metrics)`` rows as ``recompute`` gives them:

- the prompt trade-off (§5.2, Figures 1 and 5-9): Pearson r of Acc C and of Acc D
  against the strategy index, zero-shot → dap → cot → counterfactual, per model;
- model scale (§5.3, Figure 2, Table 5): Pearson r of model size (log10 and raw) against
  TBR_C and Δ_AA for one strategy;
- the two-way repeated-measures ANOVA of footnote 4: accuracy by group (A, C) × telic
  verb class, with models as subjects.

On the paper's own numbers (Tables 3, 5, 7, 8) these reproduce its statistics: Llama-3.1
r_C = 1.00, r_D = -0.91 (p = 0.09); size vs TBR_C r = -0.93 (p = 0.02) on log size and
r = 0.79 for Δ_AA on raw size; class F(3, 18) = 6.98, interaction F(3, 18) = 3.88.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.io.markdown import fmt, markdown_table
from lingdiag.metrics import stats
from lingdiag.metrics.interpretable import counts_reason
from lingdiag.metrics.stats import Correlation
from lingdiag.reading import load_run
from lingdiag.reading.door import Accepted
from lingdiag.records import ResultRow
from lingdiag.suites.imperfective.data import TELIC_CLASSES
from lingdiag.suites.imperfective.metrics import (
    ACC,
    BY_CLASS,
    DELTA_AA,
    TBR_C,
    ClassKey,
    ImperfectiveMetrics,
    of,
)
from lingdiag.suites.imperfective.prompts import STRATEGIES


@dataclass(frozen=True, slots=True)
class TradeOff:
    """One model's Acc C and Acc D across prompt strategies (§5.2, Figure 1)."""

    model: str
    strategies: tuple[str, ...]
    """In the paper's order; the x value of each is its index in ``STRATEGIES``."""
    acc_c: tuple[float, ...]
    acc_d: tuple[float, ...]
    corr_c: Correlation | None
    """Acc C against the strategy index, over the interpretable strategies only; None with fewer
    than 3 of them or constant values."""
    corr_d: Correlation | None
    not_interpretable: tuple[str, ...] = ()
    """Strategies at least half unparsed or failed (:mod:`lingdiag.metrics.interpretable`): shown,
    marked, and left out of the correlations."""


@dataclass(frozen=True, slots=True)
class ScalePoint:
    """One model of a model-scale comparison."""

    model: str
    n_params: float
    tbr_c: float
    delta_aa: float


@dataclass(frozen=True, slots=True)
class ModelScale:
    """Model size against bias for one strategy (§5.3, Figure 2, Table 5)."""

    strategy: str
    points: tuple[ScalePoint, ...]
    """Sorted by size."""
    tbr_c_vs_log_size: Correlation | None
    """The paper's statistic (r = -0.93 for Qwen2.5 1.5B-72B) uses log size."""
    delta_aa_vs_log_size: Correlation | None
    tbr_c_vs_size: Correlation | None
    """Raw size: the "linear scaling trend" of Appendix E (r = 0.79 for Δ_AA)."""
    delta_aa_vs_size: Correlation | None


@dataclass(frozen=True, slots=True)
class AnovaEffect:
    """One row of a repeated-measures ANOVA table."""

    effect: str
    """``group``, ``verb_class`` or ``group:verb_class``."""
    f: float
    df_num: float
    df_den: float
    p: float


@dataclass(frozen=True, slots=True)
class VerbClassAnova:
    """Accuracy ~ group (A, C) × telic verb class, subjects = models (footnote 4)."""

    strategy: str
    models: tuple[str, ...]
    classes: tuple[str, ...]
    """Classes present with a defined accuracy for every model (the design must be balanced)."""
    effects: tuple[AnovaEffect, ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything :func:`analyze` computes; parts that need more runs are empty or None."""

    tradeoff: tuple[TradeOff, ...]
    scale: ModelScale | None
    anova: VerbClassAnova | None
    notes: tuple[str, ...]
    """Why a part is missing (e.g. "model scale needs sizes for ≥ 3 models")."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (NaN becomes None)."""
        out: dict[str, Any] = _finite(asdict(self))
        return out


def _finite(x: Any) -> Any:
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else x
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def pearson(x: Sequence[float], y: Sequence[float]) -> Correlation | None:
    """Pearson r and p over the pairs where both values are defined.

    Args:
        x: First variable.
        y: Second variable, same length.

    Returns:
        The correlation with its Fisher z interval (the points are models or strategies, too
        few and too unlike for a bootstrap), or None with fewer than 3 defined pairs or a
        constant variable (:func:`lingdiag.metrics.stats.correlatable`).
    """
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if _defined(a) and _defined(b)]
    return stats.pearson([a for a, _ in pairs], [b for _, b in pairs])


def _defined(v: Any) -> bool:
    return isinstance(v, int | float) and not math.isnan(v)


def by_model(rows: Sequence[ResultRow]) -> dict[str, dict[str, ImperfectiveMetrics]]:
    """``{model: {condition: metrics}}``; a model with two runs of one condition is an error."""
    out: dict[str, dict[str, ImperfectiveMetrics]] = {}
    for r in rows:
        if r.condition in out.setdefault(r.model, {}):
            raise ConfigError(f"model {r.model!r} has two runs of condition {r.condition!r}; "
                              "give each model's runs of a strategy only once")
        out[r.model][r.condition] = of(r)
    return out


def prompt_tradeoff(rows: Sequence[ResultRow]) -> list[TradeOff]:
    """Acc C and Acc D across strategies, per model (§5.2, Figure 1, Figures 5-9).

    Args:
        rows: ``(model, condition, metrics)`` of ImperfectiveNLI runs.

    Returns:
        One entry per model with at least 2 of the paper's strategies, sorted by model;
        correlations need 3. The x value of a strategy is its index in zero-shot → dap →
        cot → counterfactual, so a missing strategy leaves a gap rather than shifting the rest.
    """
    out = []
    for model, conds in sorted(by_model(rows).items()):
        present = [s for s in STRATEGIES if s in conds]
        if len(present) < 2:
            continue
        acc_c = tuple(float(conds[s][ACC["C"]]) for s in present)
        acc_d = tuple(float(conds[s][ACC["D"]]) for s in present)
        bad = tuple(s for s in present if counts_reason(cast(Mapping[str, Any], conds[s])) is not None)
        keep = [k for k, s in enumerate(present) if s not in bad]
        x = [float(STRATEGIES.index(present[k])) for k in keep]
        out.append(TradeOff(model, tuple(present), acc_c, acc_d, pearson(x, [acc_c[k] for k in keep]),
                            pearson(x, [acc_d[k] for k in keep]), bad))
    return out


_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmbt]?)\s*$", re.I)
_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_size(text: str) -> float:
    """A parameter count from ``7B``, ``1.5b``, ``135M`` or ``134515008``.

    Raises:
        ConfigError: the text is not a count.
    """
    m = _SIZE.match(text)
    if not m:
        raise ConfigError(f"model size {text!r} is not a number of parameters (e.g. 7B, 135M, 134515008)")
    return float(m.group(1)) * _SCALE[m.group(2).lower()]


def model_scale(rows: Sequence[ResultRow], sizes: Mapping[str, float],
                strategy: str = "zero-shot") -> ModelScale | None:
    """Model size against TBR_C and Δ_AA for one strategy (§5.3).

    Args:
        rows: ``(model, condition, metrics)`` of ImperfectiveNLI runs.
        sizes: Parameter count per model; models without one are left out.
        strategy: The condition compared across models (the paper: zero-shot).

    Returns:
        The points and correlations, or None when fewer than 2 models have a size and
        the strategy (correlations themselves need 3).
    """
    points = []
    for model, conds in by_model(rows).items():
        if strategy in conds and model in sizes and sizes[model] > 0:
            m = conds[strategy]
            points.append(ScalePoint(model, float(sizes[model]), float(m[TBR_C]), float(m[DELTA_AA])))
    if len(points) < 2:
        return None
    points.sort(key=lambda p: p.n_params)
    size = [p.n_params for p in points]
    log_size = [math.log10(s) for s in size]
    tbr = [p.tbr_c for p in points]
    daa = [p.delta_aa for p in points]
    return ModelScale(strategy, tuple(points), pearson(log_size, tbr), pearson(log_size, daa),
                      pearson(size, tbr), pearson(size, daa))


def verb_class_anova(rows: Sequence[ResultRow], strategy: str = "zero-shot") -> VerbClassAnova | None:
    """Two-way repeated-measures ANOVA of group (A, C) × telic verb class (footnote 4).

    Each model is a subject contributing one accuracy per group and class
    (``metrics["by_class"]["acc_A"|"acc_C"]``). AnovaRM needs a balanced design, so only
    classes with a defined accuracy for every model and both groups are used.

    Args:
        rows: ``(model, condition, metrics)`` of ImperfectiveNLI runs.
        strategy: The condition analysed (the paper: zero-shot).

    Returns:
        The F tests, or None where they are undefined (``anova_gap`` says why).

    Raises:
        MissingDependency: statsmodels is not installed.
    """
    if anova_gap(rows, strategy) is not None:
        return None
    table, classes = _anova_inputs(rows, strategy)
    try:
        import pandas as pd
        from statsmodels.stats.anova import AnovaRM
    except ImportError as e:
        raise MissingDependency("the repeated-measures ANOVA", "stats", ["statsmodels>=0.14"]) from e
    data = pd.DataFrame([
        {"model": m, "group": g[-1], "verb_class": k, "acc": float(t[g][k])}
        for m, t in table.items() for g in (ACC["A"], ACC["C"]) for k in classes
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = AnovaRM(data, "acc", "model", within=["group", "verb_class"]).fit().anova_table
    effects = tuple(
        AnovaEffect(str(name), float(r["F Value"]), float(r["Num DF"]), float(r["Den DF"]), float(r["Pr > F"]))
        for name, r in result.iterrows()
    )
    return VerbClassAnova(strategy, tuple(sorted(table)), classes, effects)


def _anova_inputs(rows: Sequence[ResultRow], strategy: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Each model's per-class accuracies, and the classes defined for every model and both groups."""
    table = {m: c[strategy][BY_CLASS] for m, c in by_model(rows).items() if strategy in c}
    groups: tuple[ClassKey, ...] = ("acc_A", "acc_C")
    classes = tuple(k for k in TELIC_CLASSES if all(_defined(t[g].get(k)) for t in table.values() for g in groups))
    return table, classes


def anova_gap(rows: Sequence[ResultRow], strategy: str = "zero-shot") -> str | None:
    """Why the verb-class ANOVA is undefined on ``rows`` (None when it can be computed)."""
    table, classes = _anova_inputs(rows, strategy)
    if len(table) < 2:
        return f"verb-class ANOVA (footnote 4) needs {strategy} runs of ≥ 2 models (got {len(table)})"
    if len(classes) < 2:
        return (f"verb-class ANOVA (footnote 4) needs ≥ 2 telic classes with an accuracy for every model in both "
                f"groups (usable: {', '.join(classes) or 'none'})")
    cells = [[float(t[g][k]) for g in (ACC["A"], ACC["C"]) for k in classes] for t in table.values()]
    # The error terms are the model × condition interactions: when every model's accuracies
    # are another's plus a constant (e.g. identical models), F = x/0 is no test at all.
    grand = sum(map(sum, cells)) / (len(cells) * len(cells[0]))
    col = [sum(c[j] for c in cells) / len(cells) for j in range(len(cells[0]))]
    residual = sum((x - sum(c) / len(c) - col[j] + grand) ** 2 for c in cells for j, x in enumerate(c))
    if residual < 1e-12:
        return ("verb-class ANOVA (footnote 4) is undefined: the models' accuracies leave no error variance "
                "(they differ by at most a constant)")
    return None


def analyze(rows: Sequence[ResultRow], sizes: Mapping[str, float] | None = None,
            strategy: str = "zero-shot") -> Analysis:
    """All three analyses, with a note for each part the given runs cannot support.

    Args:
        rows: ``(model, condition, metrics)`` of ImperfectiveNLI runs.
        sizes: Parameter count per model (from ``meta.json`` or the user).
        strategy: The condition for the model-scale and ANOVA parts.

    Returns:
        The analysis.
    """
    sizes = dict(sizes or {})
    notes = []
    tradeoff = tuple(prompt_tradeoff(rows))
    if not any(t.corr_c or t.corr_d for t in tradeoff):
        notes.append("prompt trade-off (§5.2) needs runs of ≥ 3 strategies of one model")
    scale = model_scale(rows, sizes, strategy)
    if scale is None or len(scale.points) < 3:
        notes.append(f"model scale (§5.3) needs {strategy} runs of ≥ 3 models with a known size "
                     f"(sizes known for: {', '.join(sorted(sizes)) or 'none'})")
    elif scale.tbr_c_vs_log_size is None or scale.delta_aa_vs_log_size is None:
        notes.append("model scale (§5.3): Pearson r is undefined where TBR_C or Δ_AA is equal for every model")
    anova = verb_class_anova(rows, strategy)
    gap = anova_gap(rows, strategy)
    if gap is not None:
        notes.append(gap)
    return Analysis(tradeoff, scale, anova, tuple(notes))


def _corr(c: Correlation | None) -> str:
    if c is None or c.ci95 is None:
        return "–"
    return f"r = {c.r:.2f} [{c.ci95[0]:.2f}, {c.ci95[1]:.2f}], p = {c.p:.2f} (n = {c.n})"


TRADEOFF_NOTE = ("A strategy marked not interpretable (at least half unparsed or failed) is shown but left out "
                 "of the correlations: its accuracy measures the parser.\n")
FISHER_NOTE = "r: Pearson, [95% interval]: Fisher z (scipy pearsonr); [-1.00, 1.00] with 3 points.\n"


def to_markdown(a: Analysis) -> str:
    """The analysis as markdown: one table per part, then the notes."""
    parts = []
    if a.tradeoff:
        parts.append("### Prompt trade-off (§5.2, Figure 1)\n\n" + markdown_table(
            ["Model", "Strategies", "Acc C", "Acc D", "Acc C ~ strategy", "Acc D ~ strategy"],
            [[t.model, " → ".join(s + (" (not interpretable)" if s in t.not_interpretable else "")
                                  for s in t.strategies), " ".join(fmt(v) for v in t.acc_c),
              " ".join(fmt(v) for v in t.acc_d), _corr(t.corr_c), _corr(t.corr_d)] for t in a.tradeoff])
            + "\n" + FISHER_NOTE + (TRADEOFF_NOTE if any(t.not_interpretable for t in a.tradeoff) else ""))
    if a.scale:
        s = a.scale
        parts.append(f"### Model scale (§5.3, {s.strategy})\n\n" + markdown_table(
            ["Model", "Parameters", "TBR_C", "Δ_AA"],
            [[p.model, f"{p.n_params / 1e9:.3g}B", p.tbr_c, p.delta_aa] for p in s.points]) + "\n" +
            markdown_table(["Size", "TBR_C", "Δ_AA"],
                           [["log10(parameters)", _corr(s.tbr_c_vs_log_size), _corr(s.delta_aa_vs_log_size)],
                            ["parameters", _corr(s.tbr_c_vs_size), _corr(s.delta_aa_vs_size)]]) + "\n" + FISHER_NOTE)
    if a.anova:
        v = a.anova
        parts.append(f"### Group × verb class repeated-measures ANOVA (footnote 4, {v.strategy}; "
                     f"{len(v.models)} models, classes: {', '.join(v.classes)})\n\n" + markdown_table(
                         ["Effect", "F", "df", "p"],
                         [[e.effect, e.f, f"({e.df_num:g}, {e.df_den:g})", f"{e.p:.4f}"] for e in v.effects]))
    if a.notes:
        parts.append("\n".join(f"- {n}" for n in a.notes) + "\n")
    return "\n".join(parts)


def sizes_of(rows: Sequence[ResultRow]) -> dict[str, float]:
    """The parameter count each model's runs recorded in ``meta.json``, where known."""
    return {r.model: r.n_params for r in rows if r.n_params is not None}


def load_runs(let_in: Sequence[Accepted]) -> tuple[list[ResultRow], dict[str, float]]:
    """Rows (metrics recomputed from the records) and recorded sizes of the ImperfectiveNLI runs the door let
    in (``lingdiag.reading.door.accepted``, asked once by the caller, which prints its marks).

    Raises:
        ConfigError: a run directory holds another suite.
    """
    rows: list[ResultRow] = []
    for run_dir in (r.path for r in let_in):
        run = load_run(run_dir)
        if run.suite.name != "imperfective":
            raise ConfigError(f"{run_dir} is a {run.suite.name!r} run; these analyses need imperfective runs")
        rows += run.rows
    return rows, sizes_of(rows)


def report_section(rows: Sequence[ResultRow]) -> str:
    """The HTML report's analysis section for ImperfectiveNLI runs (sizes from ``meta.json``)."""
    return "## ImperfectiveNLI analyses\n\n" + to_markdown(analyze(rows, sizes_of(rows)))
