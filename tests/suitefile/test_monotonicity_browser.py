"""examples/suites/monotonicity-nli.yaml on the two embedded models (smollm2-135m, gemma3-270m):
the HTML report, opened in a real headless Chromium, holds the breakdown tables with intervals,
the declared figures, the scaling figure, the competence table, and greys out what is not
interpretable; ``compare`` flags the same conditions. A spread of 16 of the 48 items per condition
(every fourth item would be one kind of pair) keeps the test short; the full run is documented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import chromium_path
from typer.testing import CliRunner

from lingdiag import RunConfig, run
from lingdiag.cli import app
from lingdiag.cli.compare import not_interpretable
from lingdiag.reading import load_runs
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "monotonicity-nli.yaml"
MODELS = ("smollm2-135m", "gemma3-270m")
SECTION = "#suite-monotonicity-nli"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("monotonicity")
    runs = []
    for model in MODELS:
        run(RunConfig(suite=str(EXAMPLE), model=model, limit=16), root / model)
        runs.append(root / model)
    loaded = load_runs(runs)
    write_html(root / "report.html", tables(loaded), loaded)
    return root / "report.html", runs


@pytest.fixture(scope="module")
def page(report: tuple[Path, list[Path]]) -> Iterator[tuple[Any, list[str]]]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(report[0].as_uri())
        yield pg, errors
        browser.close()


def test_breakdown_tables_figures_scaling_and_competence_render(page: tuple[Any, list[str]]) -> None:
    pg, errors = page
    assert errors == []
    section = pg.locator(SECTION)
    headings = section.locator("h4").all_inner_texts()
    assert {"Accuracy by direction", "Accuracy by trigger", '"yes" rate by trigger'} <= set(headings)
    headers = section.locator("th").all_inner_texts()
    assert {"direction = downward", "direction = upward", "Trigger"} <= set(headers)
    # A tag as the table's rows, each cell with its interval.
    cells = section.locator("td").all_inner_texts()
    assert {"no", "not", "some"} <= set(cells) and any(c.count("[") == 1 and c.endswith("]") for c in cells)
    figures = pg.locator("figure img")
    alts = [img.get_attribute("alt") for img in figures.all()]
    assert {"monotonicity-nli: Accuracy per condition", "monotonicity-nli: Accuracy by direction",
            'monotonicity-nli: "yes" rate by trigger', "monotonicity-nli: accuracy by model size"} <= set(alts)
    assert all(img.evaluate("e => e.complete && e.naturalWidth > 100") for img in figures.all())
    caption = section.locator("figcaption", has_text="by model size").inner_text()
    assert "gemma3-270m 268M" in caption and "smollm2-135m 135M" in caption
    assert section.locator("h4", has_text="competence (label log-likelihood) vs performance").count() == 1


def test_uninterpretable_conditions_are_greyed_in_the_report_and_flagged_by_compare(
        page: tuple[Any, list[str]], report: tuple[Path, list[Path]]) -> None:
    pg, _ = page
    flagged = {(Path(run).name, c): why for run in report[1] for c, why in not_interpretable(run).items()}
    listed = pg.locator("#not-interpretable + ul li").all_inner_texts()
    assert len(listed) == len(flagged)
    result = CliRunner().invoke(app, ["compare", *map(str, report[1])])
    assert result.exit_code == 0, result.output
    rows = {line.split("|")[1].strip(): line for line in result.output.splitlines()
            if line.startswith("| ") and not line.startswith("| Condition")}
    for condition in ("plain", "instructed", "loglik"):
        sides = [f"{side}: {flagged[(model, condition)]}" for side, model in zip("AB", MODELS, strict=True)
                 if (model, condition) in flagged]
        assert ("not interpretable: " + "; ".join(sides) in rows[condition]) == bool(sides)
