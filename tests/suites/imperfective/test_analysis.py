"""ImperfectiveNLI cross-run analyses: the paper's own statistics, and real run directories."""

import hashlib
import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import result_row as row

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.figures import ModelColours
from lingdiag.models.mock import MockBackend
from lingdiag.reading.door import accepted
from lingdiag.records import GenerationRequest, ResultRow
from lingdiag.suites.imperfective.analysis import (
    analyze,
    by_model,
    load_runs,
    model_scale,
    parse_size,
    pearson,
    prompt_tradeoff,
    to_markdown,
    verb_class_anova,
)
from lingdiag.suites.imperfective.data import TELIC_CLASSES, builtin_items

# Table 3 of the paper: Acc C and Acc D per strategy (zero-shot, dap, cot, counterfactual),
# with the correlations its Figures 1 and 5-9 report.
TABLE3 = {
    "Llama-3.1": ([0.02, 0.36, 0.67, 0.97], [0.98, 0.99, 0.65, 0.00], (1.00, 0.00), (-0.91, 0.09)),
    "Mistral": ([0.02, 0.06, 0.41, 0.87], [1.00, 1.00, 0.66, 0.19], (0.95, 0.05), (-0.93, 0.07)),
    "Yi-1.5": ([0.02, 0.20, 0.85, 1.00], [1.00, 1.00, 0.44, 0.10], (0.97, 0.03), (-0.95, 0.05)),
    "gemma-2": ([0.06, 0.60, 0.98, 1.00], [1.00, 0.88, 0.15, 0.00], (0.94, 0.06), (-0.95, 0.05)),
    "glm-4": ([0.03, 0.33, 0.38, 0.73], [1.00, 0.98, 0.97, 0.24], (0.97, 0.03), (-0.79, 0.21)),
    "deepseek": ([0.00, 0.00, 0.40, 0.00], [1.00, 1.00, 0.94, 0.98], (0.26, 0.74), (-0.55, 0.45)),
}
STRATEGIES = ("zero-shot", "dap", "cot", "counterfactual")
LINGDIAG = [sys.executable, "-c", "from lingdiag.cli import main; main()"]
"""The real command line (``python -m lingdiag.cli`` would import the CLI module twice)."""


def table3_rows() -> list[ResultRow]:
    return [row(m, s, {"acc_C": c[k], "acc_D": d[k]}) for m, (c, d, _, _) in TABLE3.items()
            for k, s in enumerate(STRATEGIES)]


@pytest.mark.parametrize("model", sorted(TABLE3))
def test_prompt_tradeoff_reproduces_figures_1_and_5_to_9(model: str) -> None:
    result = {t.model: t for t in prompt_tradeoff(table3_rows())}[model]
    _, _, (rc, pc), (rd, pd) = TABLE3[model]
    assert result.strategies == STRATEGIES
    assert result.corr_c is not None and result.corr_d is not None
    assert round(result.corr_c.r, 2) == rc and round(result.corr_c.p, 2) == pc
    assert round(result.corr_d.r, 2) == rd and round(result.corr_d.p, 2) == pd


def test_tradeoff_needs_three_strategies_for_a_correlation() -> None:
    rows = [row("m", "zero-shot", {"acc_C": 0.1, "acc_D": 0.9}),
            row("m", "counterfactual", {"acc_C": 0.9, "acc_D": 0.1}),
            row("single", "zero-shot", {"acc_C": 0.1, "acc_D": 0.9})]
    (t,) = prompt_tradeoff(rows)
    assert t.model == "m" and t.corr_c is None and t.corr_d is None
    # A missing strategy keeps its slot: x = 0, 2, 3 rather than 0, 1, 2.
    points = (("zero-shot", 0.0), ("cot", 0.2), ("counterfactual", 0.9))
    rows = [row("m", s, {"acc_C": c, "acc_D": 0.5 + c / 10}) for s, c in points]
    (t,) = prompt_tradeoff(rows)
    assert t.corr_c is not None and t.corr_c.n == 3
    assert t.corr_c.r == pytest.approx(pearson([0, 2, 3], [0.0, 0.2, 0.9]).r)  # type: ignore[union-attr]


def test_tradeoff_draws_no_correlation_through_unparsed_strategies() -> None:
    # The demo's shape: CoT and counterfactual 100% unparsed. They are shown and marked, and r is
    # over the interpretable strategies only (here two: no correlation at all).
    counts = {"zero-shot": 0, "dap": 5, "cot": 100, "counterfactual": 100}
    rows = [row("m", s, {"acc_C": 0.1 * k, "acc_D": 1 - 0.1 * k, "n": 100, "n_unparsed": counts[s], "n_errors": 0})
            for k, s in enumerate(STRATEGIES)]
    (t,) = prompt_tradeoff(rows)
    assert t.strategies == STRATEGIES and t.not_interpretable == ("cot", "counterfactual")
    assert t.corr_c is None and t.corr_d is None
    from lingdiag.suites.imperfective.analysis import Analysis

    text = to_markdown(Analysis((t,), None, None, ()))
    assert "zero-shot → dap → cot (not interpretable) → counterfactual (not interpretable)" in text
    assert "left out of the correlations" in text
    from lingdiag.suites.imperfective.figures import tradeoff_png

    assert tradeoff_png(rows, ModelColours.of(r.model for r in rows)).startswith(b"\x89PNG")


def test_verb_class_figure_has_no_empty_panel() -> None:
    from lingdiag.suites.imperfective.figures import figures, verb_class_strategies

    nan = float("nan")
    rows = [row("m", "zero-shot", {"acc_A": 1.0, "acc_B": 1.0, "acc_C": 0.0, "acc_D": 0.5,
                                   "by_class": {"acc_A": {"Creation": 1.0}, "acc_C": {"Creation": 0.0}}}),
            row("m", "dap", {"acc_A": 1.0, "acc_B": 1.0, "acc_C": 0.5, "acc_D": 0.5,
                             "by_class": {"acc_A": {"Creation": nan}, "acc_C": {}}}),
            row("m", "cot", {"acc_A": 1.0, "acc_B": 1.0, "acc_C": 0.5, "acc_D": 0.5})]
    assert verb_class_strategies(rows) == ["zero-shot"]
    assert verb_class_strategies(rows[1:]) == []
    assert not [f for f in figures(rows[1:], ModelColours.of(["m"])) if f.title.startswith("Telic verb classes")]


# Table 5: Qwen2.5 sizes in zero-shot; §5.3 reports r = -0.93 (p = 0.02) and 0.94 (p = 0.01),
# Appendix E "the linear scaling trend (r = 0.79)" for Δ_AA against raw size.
TABLE5 = {"1.5B": (1.00, 0.00), "7B": (0.53, 0.44), "14B": (0.61, 0.37), "32B": (0.09, 0.83), "72B": (0.16, 0.81)}


def test_model_scale_reproduces_section_5_3() -> None:
    rows = [row(f"Qwen2.5-{s}", "zero-shot", {"tbr_C": t, "delta_aa": d}) for s, (t, d) in TABLE5.items()]
    sizes = {f"Qwen2.5-{s}": parse_size(s) for s in TABLE5}
    result = model_scale(rows, sizes)
    assert result is not None and [p.model for p in result.points][0] == "Qwen2.5-1.5B"
    tbr, daa = result.tbr_c_vs_log_size, result.delta_aa_vs_log_size
    assert tbr is not None and daa is not None and result.delta_aa_vs_size is not None
    assert (round(tbr.r, 2), round(tbr.p, 2)) == (-0.93, 0.02)
    assert (round(daa.r, 2), round(daa.p, 2)) == (0.95, 0.01)  # the paper prints 0.94 (0.9465)
    assert round(result.delta_aa_vs_size.r, 2) == 0.79
    # Models without a size are left out; two points give no correlation.
    partial = model_scale(rows, {k: v for k, v in sizes.items() if "1.5B" in k or "7B" in k})
    assert partial is not None and len(partial.points) == 2 and partial.tbr_c_vs_log_size is None


# Tables 7 and 8: zero-shot accuracy per telic class (Change of State, Consumption, Creation,
# Motion to Goal) for groups A and C; footnote 4 reports F(3, 18) = 6.98 and 3.88.
TABLE7: list[list[float]] = [[.48, .56, .38, .75], [.32, .44, .31, .88], [.20, .11, .15, .50], [.34, .67, .23, .62],
          [.05, 0, .05, 0], [.02, 0, .05, 0], [.09, .33, .08, .50]]
TABLE8: list[list[float]] = [[.02, 0, .03, 0], [0, 0, .03, .12], [.43, .33, .51, .62], [.02, .11, 0, 0],
          [0, 0, 0, 0], [.02, .11, .05, .25], [0, .11, .03, .12]]


def anova_rows() -> list[ResultRow]:
    return [row(f"model{k}", "zero-shot", {"by_class": {"acc_A": dict(zip(TELIC_CLASSES, a, strict=True)),
                                                     "acc_C": dict(zip(TELIC_CLASSES, c, strict=True))}})
            for k, (a, c) in enumerate(zip(TABLE7, TABLE8, strict=True))]


def test_verb_class_anova_reproduces_footnote_4() -> None:
    result = verb_class_anova(anova_rows())
    assert result is not None and len(result.models) == 7 and result.classes == TELIC_CLASSES
    effects = {e.effect: e for e in result.effects}
    cls, inter = effects["verb_class"], effects["group:verb_class"]
    assert (round(cls.f, 2), cls.df_num, cls.df_den) == (6.98, 3, 18) and cls.p < 0.01
    assert (round(inter.f, 2), inter.df_num, inter.df_den) == (3.88, 3, 18) and 0.01 < inter.p < 0.05
    assert effects["group"].df_num == 1 and effects["group"].df_den == 6


def test_anova_drops_classes_missing_for_any_model_and_needs_two_models() -> None:
    rows = anova_rows()
    rows[0].metrics["by_class"]["acc_C"]["Consumption"] = math.nan  # no Consumption items in one run
    result = verb_class_anova(rows)
    assert result is not None and "Consumption" not in result.classes and len(result.classes) == 3
    assert verb_class_anova(rows[:1]) is None


def test_anova_without_statsmodels_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "statsmodels.stats.anova", None)
    with pytest.raises(MissingDependency, match=r"lingdiag\[stats\]"):
        verb_class_anova(anova_rows())


@pytest.mark.parametrize(("x", "y", "defined"), [
    ([1, 2, 3], [2, 4, 7], True),
    ([1, 2], [2, 4], False),  # too few points
    ([1, 2, 3], [5, 5, 5], False),  # constant: r undefined
    ([1, 2, 3, math.nan], [1, 3, 2, 4], True),  # NaN pairs dropped
    ([1, 2, math.nan], [1, 3, 2], False),
])
def test_pearson_is_defined_only_where_r_is(x: list[float], y: list[float], defined: bool) -> None:
    assert (pearson(x, y) is not None) == defined


@pytest.mark.parametrize(("text", "value"), [("7B", 7e9), ("1.5b", 1.5e9), ("135M", 1.35e8),
                                             ("134515008", 134515008.0), ("2e9", 2e9)])
def test_parse_size(text: str, value: float) -> None:
    assert parse_size(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["seven", "7 GB", "", "-3B"])
def test_parse_size_rejects_non_counts(text: str) -> None:
    with pytest.raises(ConfigError, match="not a number of parameters"):
        parse_size(text)


def test_two_runs_of_one_model_and_condition_are_an_error() -> None:
    with pytest.raises(ConfigError, match="two runs of condition 'zero-shot'"):
        by_model([row("m", "zero-shot", {}), row("m", "zero-shot", {})])


# -- real run directories --------------------------------------------------------------------

PREMISES = {it.fields["premise"]: it for it in builtin_items()}
GOOD = {"A": "False", "B": "True", "C": "Unknown", "D": "True"}
BAD = {"A": "True", "B": "False", "C": "True", "D": "Unknown"}


class SizedMock(MockBackend):
    """A scripted backend that records a parameter count, as the transformers backend does."""

    def __init__(self, n_params: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.n_params = n_params

    @property
    def identity(self) -> dict[str, str]:
        return {**super().identity, "n_params": str(self.n_params)}


def scripted(skill: float, step: int) -> Callable[[GenerationRequest], str]:
    """Right on group C more often as strategies get more aggressive, wrong on D more often."""

    def answer(req: GenerationRequest) -> str:
        item = next(it for p, it in PREMISES.items() if p in req.messages[-1].content)
        g = item.tags["group"]
        p = {"A": skill, "B": 0.9, "C": skill * (step + 1) / 4, "D": 1 - step / 4}[g]
        h = int(hashlib.sha256(f"{item.id}{skill}{step}".encode()).hexdigest(), 16) % 1000 / 1000
        return GOOD[g] if h < p else BAD[g]

    return answer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three scripted "models" × four strategies, one run directory each (read, never changed, by the tests)."""
    tmp_path = tmp_path_factory.mktemp("runs")
    out = []
    models = (("small", 0.3, 135_000_000), ("medium", 0.6, 1_500_000_000), ("large", 0.9, 7_000_000_000))
    for name, skill, size in models:
        for k, s in enumerate(STRATEGIES):
            cfg = RunConfig(suite="imperfective", model=f"mock-{name}", axes={"strategy": [s]}, limit=80)
            backend = SizedMock(size, generate_fn=scripted(skill, k), name=f"mock-{name}")
            evaluate(cfg, backend, tmp_path / f"{name}-{s}")
            out.append(tmp_path / f"{name}-{s}")
    return out


def test_analyze_real_runs_with_sizes_from_meta(runs: list[Path]) -> None:
    rows, sizes = load_runs(accepted(runs))
    assert sizes == {"mock-small": 135e6, "mock-medium": 1.5e9, "mock-large": 7e9}
    result = analyze(rows, sizes)
    assert [t.model for t in result.tradeoff] == ["mock-large", "mock-medium", "mock-small"]
    large = result.tradeoff[0]
    assert large.corr_c is not None and large.corr_c.r > 0.8  # the scripted trade-off
    assert large.corr_d is not None and large.corr_d.r < -0.8
    assert result.scale is not None and [p.n_params for p in result.scale.points] == [135e6, 1.5e9, 7e9]
    assert result.anova is not None and len(result.anova.models) == 3 and not result.notes
    text = to_markdown(result)
    assert "### Prompt trade-off" in text and "| mock-large | 7B |" in text and "| mock-small | 0.135B |" in text
    blob = json.dumps(result.to_json())  # JSON-able, NaN-free
    assert "NaN" not in blob and json.loads(blob)["scale"]["strategy"] == "zero-shot"


def test_analyze_asks_each_runs_state_once(runs: list[Path], monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The door decides once per run; the rows are read from the runs it let in, not through it again."""
    from lingdiag.rundir import RunState, run_state
    from lingdiag.suites.imperfective import cli

    asked: list[Path] = []

    def counted(path: Path) -> RunState:
        asked.append(path)
        return run_state(path)

    monkeypatch.setattr("lingdiag.reading.door.run_state", counted)
    cli.analyze(runs, size=None, strategy="zero-shot", partial=False, as_json=True)
    assert sorted(asked) == sorted(runs) and json.loads(capsys.readouterr().out)["not_final"] == {}


def test_analyze_with_too_few_runs_explains_what_is_missing(runs: list[Path]) -> None:
    rows, sizes = load_runs(accepted(runs[:1]))
    result = analyze(rows, sizes)
    assert result.tradeoff == () and result.scale is None and result.anova is None
    assert len(result.notes) == 3 and any("≥ 3 strategies" in n for n in result.notes)


def test_cli_analyze_prints_tables_and_json(runs: list[Path]) -> None:
    cmd = [*LINGDIAG, "imperfective", "analyze", *map(str, runs)]
    text = subprocess.run(cmd + ["--size", "mock-small=72B"], capture_output=True, text=True, check=True).stdout
    assert "Prompt trade-off" in text and "Model scale" in text and "group:verb_class" in text
    assert "| mock-small | 72B |" in text  # --size overrides meta.json
    data = json.loads(subprocess.run(cmd + ["--json"], capture_output=True, text=True, check=True).stdout)
    assert {t["model"] for t in data["tradeoff"]} == {"mock-small", "mock-medium", "mock-large"}
    assert data["anova"]["effects"][1]["effect"] == "verb_class"
    bad = subprocess.run(cmd + ["--size", "mock-small=lots"], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a number of parameters" in bad.stderr


def test_anova_on_identical_models_is_skipped_for_no_error_variance() -> None:
    same = [row(f"model{k}", "zero-shot", {"by_class": {"acc_A": dict(zip(TELIC_CLASSES, TABLE7[0], strict=True)),
                                                     "acc_C": dict(zip(TELIC_CLASSES, TABLE8[0], strict=True))}})
            for k in range(3)]
    assert verb_class_anova(same) is None  # never an F < 0 or NaN printed as a result
    notes = analyze(same).notes
    assert any("no error variance" in n for n in notes) and not any("≥ 2 models" in n for n in notes)


def test_anova_skip_names_missing_classes_not_models() -> None:
    rows = anova_rows()
    for k in TELIC_CLASSES[1:]:
        rows[0].metrics["by_class"]["acc_C"][k] = math.nan
    notes = analyze(rows).notes
    assert any("≥ 2 telic classes" in n for n in notes) and not any("≥ 2 models" in n for n in notes)
