"""The report's presentation in a real headless Chromium at a common laptop width: Markdown
emphasis rendered rather than shown as ``**`` marks, the headline table whole (its N column not
behind a scrollbar), and the not-interpretable note readable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import opened_in_chromium

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables

pytestmark = pytest.mark.slow


def answer(req: GenerationRequest) -> str:
    # CoT copies its JSON template (100% unparsed, as SmolLM2 in the demo); the others vary by item.
    text = "\n".join(m.content for m in req.messages)
    return "{...}" if "json" in text.lower() else ("True", "False", "Unknown")[len(text) % 3]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("presentation")
    runs = []
    # Model names as long as real ones, and the demo's conditions (generation and log-likelihood).
    for name in ("HuggingFaceTB/SmolLM2-135M-Instruct", "google/gemma-3-270m-it-qat-q4_0-unquantized"):
        out = root / name.replace("/", "_")
        evaluate(RunConfig(suite="imperfective", model=name, dataset="builtin", limit=24,
                           axes={"strategy": ["zero-shot", "dap", "cot", "counterfactual"],
                                 "scoring": ["generate", "loglik"]}),
                 MockBackend(answer, loglik_fn=lambda r: -float(len(r.continuation)), name=name), out)
        runs.append(out)
    loaded = load_runs(runs)
    write_html(root / "report.html", tables(loaded), loaded)
    with opened_in_chromium(root / "report.html") as pg:
        yield pg


def test_markdown_emphasis_is_rendered_not_shown_as_marks(page: Any) -> None:
    text = page.evaluate("document.querySelector('main').innerText")
    assert "**" not in text and "Not interpretable" in text and "cot: 100% unparsed or failed" in text
    strong = page.evaluate("[...document.querySelectorAll('main strong')].map(e => e.textContent)")
    assert "Not interpretable" in strong


def test_the_headline_table_is_whole_at_1400_px(page: Any) -> None:
    sizes = page.evaluate("""() => [...document.querySelectorAll('.side > div')].map(d => {
        const th = [...d.querySelectorAll('th')].pop();
        const box = th.getBoundingClientRect();
        return {scroll: d.scrollWidth, client: d.clientWidth, right: box.right, last: th.textContent};
    })""")
    assert sizes, "no headline table beside a figure"
    for s in sizes:
        assert s["scroll"] <= s["client"] + 1, s  # nothing behind a horizontal scrollbar
        assert s["right"] <= 1400 and s["last"] == "N", s


def test_the_summary_names_the_headline_metric_as_its_table_does(page: Any) -> None:
    cells = page.evaluate(
        "[...document.querySelectorAll('table.glance tbody td:nth-child(2)')].map(e => e.textContent)")
    assert cells and set(cells) == {"TBR_C (↓): teleological bias rate, group C"}, cells
