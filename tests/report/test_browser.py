"""The HTML report in a real headless Chromium: it renders without console errors, every suite
shows its figures, the item browser's filters show the right rows, and hostile model output is
shown as text and runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import chromium_path

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.browser import PAGE_SIZE, records_data
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> True'


def _text(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages)


def imperfective(req: GenerationRequest) -> str:
    # Hostile markup on about one prompt in five, a parseable label elsewhere; CoT never
    # concludes (100% unparsed, as in the demo).
    text = _text(req)
    if "step-by-step" in text:
        return "Let me reason about the premise at length."
    return HOSTILE if len(text) % 5 == 0 else ("False" if "but" in text.lower() else "True")


def explica(req: GenerationRequest) -> str:
    return {0: "7", 1: "because", 2: "A"}[len(_text(req)) % 3]


def explica_ll(req: LoglikelihoodRequest) -> float:
    return -float(len(req.continuation) + len(req.context) % 7)


def cxnli(req: GenerationRequest) -> str:
    return ("entailment", "neutral", "contradiction", "I am not sure")[len(_text(req)) % 4]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("browser")
    runs = []
    for name, suite, axes, backend in (
        ("imp", "imperfective", {"strategy": ["zero-shot", "dap", "cot"]}, MockBackend(imperfective, name="mock-a")),
        ("imp-b", "imperfective", {"strategy": ["zero-shot", "dap", "cot"]}, MockBackend(imperfective, name="mock-b")),
        ("explica", "explica", {"task": ["rating", "cloze", "mc", "perplexity"], "shots": ["0"],
                                "decoding": ["greedy"]}, MockBackend(explica, explica_ll, name="mock-a")),
        ("cxnli", "cxnli", {"exp": ["1", "2"], "setting": ["zero"]}, MockBackend(cxnli, name="mock-a")),
    ):
        evaluate(RunConfig(suite=suite, model=backend.name, dataset="builtin", axes=axes, limit=24), backend,
                 root / name)
        runs.append(root / name)
    loaded = load_runs(runs)
    write_html(root / "report.html", tables(loaded), loaded)
    return root / "report.html", runs


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the module (Playwright's sync API allows one instance at a time)."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(chromium: Any, report: tuple[Path, list[Path]]) -> Iterator[tuple[Any, list[str]]]:
    pg = chromium.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(report[0].as_uri())
    pg.wait_for_selector("#items-body tr.item")
    yield pg, errors
    pg.close()


@pytest.fixture(scope="module")
def fold(chromium: Any, report: tuple[Path, list[Path]]) -> Iterator[Any]:
    """The report at 1280×800, as a reader first sees it."""
    pg = chromium.new_page(viewport={"width": 1280, "height": 800})
    pg.goto(report[0].as_uri())
    yield pg
    pg.close()


def test_summary_is_above_the_fold_with_each_suites_headline_per_model(fold: Any,
                                                                       report: tuple[Path, list[Path]]) -> None:
    glance = fold.locator("#summary table.glance")
    box = glance.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800
    rows = [r.split("\t") for r in glance.locator("tbody tr").all_inner_texts()]
    shown = {(r[0].strip(), r[2].strip()) for r in rows}
    assert shown == {("imperfective", "mock-a"), ("imperfective", "mock-b"), ("explica", "mock-a"),
                     ("cxnli", "mock-a")}
    # The headline value per model and condition, as the suite's metrics hold it.
    run = load_runs(report[1][:1])[0]
    zero = next(r for r in run.rows if r.condition == "zero-shot")
    imp_a = next(r for r in rows if r[0].strip() == "imperfective" and r[2].strip() == "mock-a")
    assert f"zero-shot {zero.metrics['tbr_C']:.2f}" in imp_a[3] and "cot not interpretable" in imp_a[3]


def test_sidebar_links_reach_every_section(fold: Any) -> None:
    links = fold.eval_on_selector_all("nav#toc a", "as => as.map(a => a.getAttribute('href'))")
    sections = fold.eval_on_selector_all("main section[id]", "ss => ss.map(s => '#' + s.id)")
    assert set(sections) <= set(links) and len(sections) >= 6
    for href in links:
        fold.click(f'nav#toc a[href="{href}"]')
        top = fold.eval_on_selector(href, "e => e.getBoundingClientRect().top")
        at_bottom = fold.evaluate("window.innerHeight + window.scrollY >= document.body.scrollHeight - 1")
        assert abs(top) < 5 or at_bottom, href


def test_degenerate_conditions_are_flagged_where_they_appear(fold: Any) -> None:
    listed = fold.locator("#not-interpretable + ul li").all_inner_texts()
    assert "imperfective: mock-a, cot: 100% unparsed or failed" in listed
    # Every Table 3 row of CoT is greyed with the reason; the other rows are not.
    table3 = fold.locator('#summary .side[data-suite="imperfective"] table tbody tr')
    for k in range(table3.count()):
        row = table3.nth(k)
        cot = row.locator("td").first.inner_text().startswith("cot")
        assert (row.get_attribute("class") == "degenerate") == cot
        if cot:
            assert "not interpretable: 100% unparsed or failed" in row.inner_text()
            assert row.locator("td").nth(3).evaluate("e => getComputedStyle(e).color") == "rgb(153, 153, 153)"
    # ...and named under each imperfective figure that plots it.
    captions = fold.locator('[data-suite="imperfective"] figcaption').all_inner_texts()
    assert captions and all("Not interpretable here: mock-a, cot" in c for c in captions)


def _records(runs: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for run in runs for line in (run / "items.jsonl").read_text().splitlines()]


def _visible(pg: Any) -> int:
    return int(pg.locator("#items-body tr.item").count())


def test_page_renders_with_figures_for_every_suite_and_no_console_errors(page: tuple[Any, list[str]]) -> None:
    pg, errors = page
    for suite in ("imperfective", "explica", "cxnli"):
        assert pg.locator(f'[data-suite="{suite}"] figure img').count() >= 2, suite
    # Every figure decoded as an image (a broken data URI has no natural width).
    widths = pg.eval_on_selector_all("figure img", "imgs => imgs.map(i => i.naturalWidth)")
    assert widths and all(w > 0 for w in widths)
    assert errors == []


def test_filters_show_the_matching_records(page: tuple[Any, list[str]], report: tuple[Path, list[Path]]) -> None:
    pg, _ = page
    records = _records(report[1])
    assert pg.locator("#items-count").inner_text().startswith(f"{len(records)} of {len(records)} records match")
    pg.select_option("#f-suite", "cxnli")
    cx = [r for r in records if r["condition"].startswith("exp")]
    assert _visible(pg) == len(cx)
    pg.select_option("#f-outcome", "unparsed")
    assert _visible(pg) == sum(r["label"] == "unparsed" for r in cx) > 0
    pg.select_option("#f-suite", "")
    pg.select_option("#f-outcome", "")
    pg.select_option("#f-model", "mock-b")
    pg.select_option("#f-condition", "dap")
    pg.select_option("#f-tag", "group=C")
    imp_b = [r for r in _records(report[1][1:2]) if r["condition"] == "dap" and r["tags"]["group"] == "C"]
    assert _visible(pg) == len(imp_b) > 0
    for sel in ("#f-model", "#f-condition", "#f-tag"):
        pg.select_option(sel, "")
    pg.fill("#f-text", "because")
    data = records_data(load_runs(report[1]))
    searched = ("item", "label", "gold", "prompt", "output", "error")
    hits = [r for r in data["rows"]
            if any("because" in data["strings"][r[data["columns"].index(c)]].lower() for c in searched)]
    assert _visible(pg) == min(PAGE_SIZE, len(hits)) > 0
    pg.fill("#f-text", "")


def test_hostile_output_is_text_and_runs_nothing(page: tuple[Any, list[str]]) -> None:
    pg, errors = page
    pg.fill("#f-text", "window.pwned")
    rows = pg.locator("#items-body tr.item")
    assert rows.count() > 0
    rows.first.click()
    shown = pg.locator("#items-body tr.more:not([hidden]) pre").all_inner_texts()
    assert any(HOSTILE in t for t in shown)
    assert pg.evaluate("window.pwned") is None
    assert pg.locator("#items-body img, #items-body script").count() == 0
    assert errors == []
