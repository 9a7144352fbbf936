"""The report in Chromium with Chinese and Hebrew: the cross-lingual comparison and CLAMS's Hebrew
pairs visible in logical order; the item browser's blocks are ``dir="auto"`` and table cells
``unicode-bidi: plaintext`` (each takes the direction of its first strong letter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import chromium_path

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables

playwright = pytest.importorskip("playwright.sync_api")
EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "imperfective-crosslingual.yaml"


def _answer(r: GenerationRequest) -> str:
    prompt = r.messages[-1].content
    if "前提" in prompt:
        return "答案：不确定" if "一" in prompt else "答案：对"
    return "Antwort: wahr" if "Prämisse" in prompt else "True"


def _shorter(r: LoglikelihoodRequest) -> float:
    return -float(len(r.continuation))


def test_chinese_and_hebrew_visible_and_rtl(tmp_path: Path) -> None:
    data = tmp_path / "data" / "he_evalset" / "simple_agrmt.txt"
    data.parent.mkdir(parents=True)
    data.write_text("True\tה מלצר רוקד\nFalse\tה מלצר רוקדים\n", encoding="utf-8")
    pairs = run(RunConfig(suite="minimal-pairs", model="mock", dataset=str(tmp_path / "data")), tmp_path / "he",
                backend=MockBackend(loglik_fn=_shorter), cache=False)
    xl = run(RunConfig(suite=str(EXAMPLE), model="mock", dataset="builtin"), tmp_path / "xl",
             backend=MockBackend(generate_fn=_answer), cache=False)
    loaded = load_runs([pairs.out, xl.out])
    write_html(tmp_path / "report.html", tables(loaded), loaded)
    chromium = chromium_path()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((tmp_path / "report.html").as_uri())
        page.wait_for_selector("#items-body tr.item")
        body = page.inner_text("body")
        assert "Across languages: accuracy per language" in body and "en (en) vs zh (zh)" in body
        page.fill("#f-text", "前提")
        page.wait_for_timeout(300)
        page.locator("#items-body tr.item").first.click()
        assert "安娜" in page.inner_text("#items-body")
        page.fill("#f-text", "he/simple_agrmt")
        page.wait_for_timeout(300)
        row = page.locator("#items-body tr.item").first
        row.click()
        detail = page.inner_text("#items-body")
        assert "ה מלצר רוקד" in detail
        pre = page.locator("#items-body pre", has_text="ה מלצר").first
        assert pre.get_attribute("dir") == "auto"  # each block takes the direction of its first strong letter
        assert page.locator("td").first.evaluate("e => getComputedStyle(e).unicodeBidi") == "plaintext"
        browser.close()
