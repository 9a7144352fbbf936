"""One colour per model across every figure of a report (``Page.colours``): a report of three models
where the prompt trade-off leaves one out and the suite file's figures leave another out; each model's
colour, as the captions' key names it and as the PNG's pixels show it, is the same in every figure.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import opened_in_chromium, png_colours

from lingdiag import RunConfig, evaluate
from lingdiag.figures import Figure
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.html import write_html
from lingdiag.report.page import Page
from lingdiag.report.tables import tables

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"
SUITE_FILE = "monotonicity-nli"
IMPERFECTIVE = {"alpha": ["zero-shot", "dap"], "beta": ["zero-shot"], "gamma": ["zero-shot", "dap"]}
"""beta answers one strategy: no trade-off line. The suite file is run by beta and gamma only."""


def _text(req: GenerationRequest | LoglikelihoodRequest) -> str:
    return "\n".join(m.content for m in req.messages)


def answer(req: GenerationRequest) -> str:
    return ("True", "False", "Unknown", "yes", "no")[len(_text(req)) % 5]


def loglik(req: LoglikelihoodRequest) -> float:
    return -float(len(req.continuation))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("colours")
    for name in (f"{SUITE_FILE}.yaml", f"{SUITE_FILE}.csv"):
        shutil.copy(EXAMPLES / name, root / name)
    for model, strategies in IMPERFECTIVE.items():
        evaluate(RunConfig(suite="imperfective", model=model, dataset="builtin", limit=12,
                           axes={"strategy": strategies}), MockBackend(answer, name=model), root / f"imp-{model}")
    for model in ("beta", "gamma"):
        evaluate(RunConfig(suite=str(root / f"{SUITE_FILE}.yaml"), model=model),
                 MockBackend(answer, loglik, name=model), root / f"file-{model}")
    return root


@pytest.fixture(scope="module")
def page(root: Path) -> Page:
    runs = load_runs(sorted(root.glob("imp-*")) + sorted(root.glob("file-*")))
    return Page(runs, tables(runs))


def keyed(page: Page) -> list[Figure]:
    return [f for s in page.suites for f in s.figures if f.legend]


def test_every_figure_gives_a_model_the_colour_it_has_in_the_whole_report(page: Page) -> None:
    colours = dict(page.colours.by_model)
    assert sorted(colours) == ["alpha", "beta", "gamma"] and len(set(colours.values())) == 3
    figures = keyed(page)
    drawn = {f.title: [m for m, _ in f.legend] for f in figures}
    assert drawn["Prompt trade-off (§5.2, Figure 1)"] == ["alpha", "gamma"], drawn
    assert sum(models == ["beta", "gamma"] for models in drawn.values()) == 3, drawn  # the suite file's three
    for f in figures:
        assert all(colours[m] == c for m, c in f.legend), (f.title, f.legend)
        shown = png_colours(f.png)
        for model, colour in colours.items():  # drawn in its colour, and no other model's colour stands in
            assert (colour in shown) == (model in drawn[f.title]), (f.title, model, colour)


@pytest.fixture(scope="module")
def browser_page(root: Path, page: Page) -> Iterator[Any]:
    write_html(root / "report.html", page.text, page.runs)
    with opened_in_chromium(root / "report.html") as pg:
        yield pg


@pytest.mark.slow
def test_the_captions_colour_keys_agree_across_figures(browser_page: Any) -> None:
    keys = browser_page.evaluate("""() => [...document.querySelectorAll('figure')].map(f =>
        [...f.querySelectorAll('.key')].map(k => [k.dataset.model,
            getComputedStyle(k.querySelector('.swatch')).backgroundColor, k.innerText.trim()]))""")
    shown = [figure for figure in keys if figure]
    assert len(shown) == 4, keys
    seen: dict[str, set[str]] = {}
    for figure in shown:
        for model, colour, text in figure:
            assert text == model
            seen.setdefault(model, set()).add(colour)
    assert sorted(seen) == ["alpha", "beta", "gamma"] and all(len(c) == 1 for c in seen.values()), seen
    assert len({c for cs in seen.values() for c in cs}) == 3, seen
