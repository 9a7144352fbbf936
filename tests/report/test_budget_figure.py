"""The budget-sweep figure: the headline metric and the unfinished rate against the thinking budget,
drawn for a run with at least two ``budget:N`` settings and for no other; its points exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import Thinker, chromium_path, png_colours, result_row

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.figures import PALETTE, ModelColours
from lingdiag.reading import load_runs
from lingdiag.records import Generation, GenerationRequest
from lingdiag.report.budget import BudgetPoint, budget_figure, budget_points
from lingdiag.report.html import render_html, write_html
from lingdiag.report.tables import rows_by_suite, tables

TITLE = "imperfective: tbr_C by thinking budget"


def _budgeted(h: int, r: GenerationRequest, label: str) -> Generation:
    """Thinks for a length set by the prompt; a trace longer than its budget never closes."""
    assert r.thinking is not None
    wanted = 10 * (h % 20 + 1)
    if wanted > r.thinking.budget:
        return Generation(text="<think>still weighing it", n_tokens=r.thinking.budget)
    return Generation(text=f"<think>weighed</think>\n{label}", n_tokens=wanted + 1, reasoning_tokens=wanted)


def budget_thinker() -> Thinker:
    return Thinker("budget-thinker", _budgeted)


def _run(tmp: Path, settings: list[str]) -> Path:
    out = tmp / "-".join(s.replace(":", "") for s in settings)
    evaluate(RunConfig(suite="imperfective", model="thinker", limit=30,
                       axes={"strategy": ["zero-shot"], "thinking": settings}), budget_thinker(), out)
    return out


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("sweep"), ["off", "budget:20", "budget:60", "budget:200"])


def test_points_from_rows_exactly() -> None:
    axes = {"strategy": "zero-shot"}
    rows = [
        result_row("m", "z/off", {"tbr_C": 0.5, "tbr_C_ci95": [0.25, 0.75], "n": 4}, {**axes, "thinking": "off"}),
        result_row("m", "z/b8", {"tbr_C": 0.25, "n": 4, "unfinished_rate": 0.5}, {**axes, "thinking": "budget:8"}),
        result_row("m", "z/b64", {"tbr_C": float("nan"), "tbr_C_ci95": [0.0, 1.0], "n": 4, "unfinished_rate": 0.25},
                   {**axes, "thinking": "budget:64"}),
        result_row("m", "z/on", {"tbr_C": 1.0, "n": 4, "unfinished_rate": 0.0}, {**axes, "thinking": "on"}),
        result_row("m", "z/on8", {"tbr_C": 1.0, "n": 4}, {**axes, "thinking": "on:8"}),
        result_row("m", "z", {"tbr_C": 1.0, "n": 4}, axes),
        result_row("k", "z/b8", {"tbr_C": 0.75, "tbr_C_ci95": [0.5, 1.0], "n": 4, "unfinished_rate": 0.0},
                   {**axes, "thinking": "budget:8"}),
        result_row("k", "f/b8", {"tbr_C": 0.0, "n": 4, "unfinished_rate": 1.0},
                   {"strategy": "few-shot", "thinking": "budget:8"}),
    ]
    assert budget_points("tbr_C", rows) == [
        BudgetPoint("k", "k: strategy few-shot", 8, 0.0, None, 1.0),
        BudgetPoint("k", "k: strategy zero-shot", 8, 0.75, (0.5, 1.0), 0.0),
        BudgetPoint("m", "m: strategy zero-shot", 0, 0.5, (0.25, 0.75), 0.0),
        BudgetPoint("m", "m: strategy zero-shot", 8, 0.25, None, 0.5),
        BudgetPoint("m", "m: strategy zero-shot", 64, None, None, 0.25),
    ]
    one_budget = [r for r in rows if r.axes.get("thinking") != "budget:64"]
    assert budget_points("tbr_C", one_budget) == []


def test_a_models_lines_take_its_colour_in_the_report() -> None:
    pytest.importorskip("matplotlib")
    rows = [result_row(model, f"{s}/{b}", {"tbr_C": 0.5, "n": 4, "unfinished_rate": 0.0},
                       {"strategy": s, "thinking": f"budget:{b}"})
            for model in ("k", "m") for s in ("zero-shot", "dap") for b in (8, 64)]
    figure = budget_figure("imperfective", "tbr_C", rows, ModelColours.of(["a", "k", "m"]))  # a: another figure's
    assert figure is not None and figure.legend == (("k", PALETTE[1]), ("m", PALETTE[2]))
    shown = png_colours(figure.png)
    assert PALETTE[1] in shown and PALETTE[2] in shown and PALETTE[0] not in shown and PALETTE[3] not in shown


def test_points_of_a_run_match_its_records(sweep: Path) -> None:
    run = load_runs([sweep])[0]
    found = budget_points("tbr_C", rows_by_suite([run])["imperfective"])
    assert [p.budget for p in found] == [0, 20, 60, 200]
    assert {p.line for p in found} == {"thinker"}  # no other axis varies
    for p in found:
        setting = "off" if p.budget == 0 else f"budget:{p.budget}"
        mine = [r for r in run.records if r.axes["thinking"] == setting]
        assert p.unfinished_rate == sum(r.label == "unfinished" for r in mine) / len(mine)
        row = next(r for r in run.rows if r.axes["thinking"] == setting)
        assert p.value == row.metrics["tbr_C"]
    rates = [p.unfinished_rate for p in found]
    assert rates[0] == 0.0 and rates[1] > rates[2] > rates[3] == 0.0  # a larger budget leaves fewer unclosed


def test_figure_for_a_sweep_and_not_otherwise(sweep: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    loaded = load_runs([sweep])
    assert render_html(tables(loaded), loaded).count(f'alt="{TITLE}"') == 1
    for settings in (["off", "on"], ["off", "budget:20"], ["budget:20", "on"]):
        other = load_runs([_run(tmp_path, settings)])
        assert "by thinking budget" not in render_html(tables(other), other)


@pytest.mark.slow
def test_figure_loads_in_chromium(sweep: Path) -> None:
    pytest.importorskip("matplotlib")
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = chromium_path()
    html = sweep.parent / "report.html"
    loaded = load_runs([sweep])
    write_html(html, tables(loaded), loaded)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(html.as_uri())
        img = page.locator(f'#suite-imperfective img[alt="{TITLE}"]')
        assert img.evaluate("i => i.complete && i.naturalWidth") > 0  # the PNG decoded under the page's CSP
        browser.close()
    assert errors == []
