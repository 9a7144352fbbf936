"""The report over a run with thinking ``off,on``: the paired comparison, the length analysis and the
unfinished rate in the tables, and the traces in the item browser (collapsed above the answer,
searchable, escaped), in a real headless Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Thinker, chromium_path

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.reading import load_runs
from lingdiag.records import Generation, GenerationRequest
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables

HOSTILE = '<img src=x onerror="window.pwned = 1">'


def _pondering(h: int, r: GenerationRequest, label: str) -> Generation:
    """The trace inline (``<think>…</think>``), its length counted; one item in five never closes it."""
    tokens = 10 * (h % 9 + 1)
    if h % 5 == 0:
        return Generation(text=f"<think>I keep weighing pelicans {HOSTILE}", n_tokens=tokens)
    answer = ("True", "False", "Unknown")[(h // 3) % 3]
    return Generation(text=f"<think>so the label is True, or is it? ponder{h % 7}</think>\n{answer}",
                      n_tokens=tokens + 1, reasoning_tokens=tokens)


def thinker() -> Thinker:
    """Answers as a reasoning model would through a server that counts reasoning tokens."""
    return Thinker("thinker", _pondering)


@pytest.fixture(scope="module")
def thinking_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("thinking") / "run"
    config = RunConfig(suite="imperfective", model="thinker", limit=40,
                       axes={"strategy": ["zero-shot"], "thinking": ["off", "on"]})
    evaluate(config, thinker(), out)
    return out


def test_tables_hold_the_paired_comparison_length_and_unfinished(thinking_run: Path) -> None:
    text = tables(load_runs([thinking_run]))
    assert "**Thinking** (thinker)" in text
    assert "strategy zero-shot: on vs off | 40 |" in text  # McNemar row over the 40 paired items
    assert "| tbr_C |" in text and "| delta_aa |" in text  # the suite's paired rates, by permutation
    assert "Accuracy by thinking length" in text and "| Q4 |" in text
    records = load_runs([thinking_run])[0].records
    unfinished = sum(r.label == "unfinished" for r in records)
    assert unfinished > 0
    assert f"| on | 40 | {unfinished} |" in text
    assert all(r.label != "unfinished" for r in records if r.axes["thinking"] == "off")


def test_a_run_without_thinking_has_no_thinking_section(tmp_path: Path) -> None:
    evaluate(RunConfig(suite="imperfective", model="thinker", limit=6, axes={"strategy": ["zero-shot"]}),
             thinker(), tmp_path / "run")
    assert "Thinking" not in tables(load_runs([tmp_path / "run"]))


@pytest.fixture(scope="module")
def page(thinking_run: Path) -> Iterator[tuple[Any, list[str]]]:
    playwright = pytest.importorskip("playwright.sync_api")
    html = thinking_run.parent / "report.html"
    loaded = load_runs([thinking_run])
    write_html(html, tables(loaded), loaded)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        pg = browser.new_page()
        errors: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(html.as_uri())
        pg.wait_for_selector("#items-body tr.item")
        yield pg, errors
        browser.close()


@pytest.mark.slow
def test_browser_shows_thinking_collapsed_above_the_answer_and_finds_it(page: tuple[Any, list[str]],
                                                                         thinking_run: Path) -> None:
    pg, errors = page
    records = load_runs([thinking_run])[0].records
    pg.select_option("#f-condition", "zero-shot/thinking-on")
    first = pg.locator("#items-body tr.item").first
    first.click()
    details = pg.locator("#items-body tr.more:not([hidden]) details.thinking")
    assert details.count() == 1
    assert details.evaluate("d => d.open") is False  # collapsed until asked
    assert "tokens" in details.locator("pre").text_content()  # there, though not shown
    # The trace comes before the answer in the expanded row.
    texts = pg.locator("#items-body tr.more:not([hidden]) td > *").evaluate_all(
        "es => es.map(e => e.tagName + ':' + e.textContent.slice(0, 12))")
    at = next(k for k, t in enumerate(texts) if t.startswith("DETAILS"))
    assert any(t.startswith("P:Raw output") for t in texts[at:])
    # Searching a word found only in the thinking finds the records that thought it.
    pg.select_option("#f-condition", "")
    pg.fill("#f-text", "pelicans")
    unfinished = sum(r.label == "unfinished" for r in records)
    assert pg.locator("#items-count").inner_text().startswith(f"{unfinished} of {len(records)} records match")
    pg.fill("#f-text", "")
    pg.select_option("#f-outcome", "unfinished")
    assert pg.locator("#items-body tr.item").count() == unfinished
    # The trace is text: its markup ran nothing.
    pg.locator("#items-body tr.item").first.click()
    pg.locator("#items-body tr.more:not([hidden]) details.thinking summary").click()
    assert HOSTILE in pg.locator("#items-body tr.more:not([hidden]) details.thinking pre").inner_text()
    assert pg.evaluate("window.pwned") is None
    assert errors == []


def test_the_dataframe_holds_unfinished_and_thinking_length(thinking_run: Path) -> None:
    import lingdiag

    frame = lingdiag.load(thinking_run)
    on = frame[frame["axis.thinking"] == "on"]
    assert on["unfinished"].sum() == (on["label"] == "unfinished").sum() > 0
    assert on.loc[~on["unfinished"], "reasoning_tokens"].notna().all()
    assert frame.loc[frame["axis.thinking"] == "off", "reasoning_tokens"].isna().all()
