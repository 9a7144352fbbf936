"""The offline HTML form in headless Chromium: a rater answers, downloads, and the file imports."""

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.human import Study

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
runner = CliRunner()
CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.slow
def test_form_records_answers_and_downloads_them(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("no chromium at /usr/bin/chromium (make test installs it)")
    r = runner.invoke(app, ["human", "export", "explica", "--limit", "3", "--per-list", "12", "--attention", "1",
                            "--out", str(tmp_path / "study")])
    assert r.exit_code == 0, r.output
    study = Study.read(tmp_path / "study" / "study.json")
    by_id = {s.id: s for s in study.stimuli}
    # The answer a rater gives each stimulus: the attention check's instructed one, else a
    # rating derived from the stimulus position in the base list.
    wanted = {sid: (by_id[sid].expected["rating"] if by_id[sid].expected else 1 + i % 10)
              for i, sid in enumerate(study.lists[0])}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(accept_downloads=True)
        page.goto((tmp_path / "study" / "form.html").as_uri() + "?list=1")
        page.fill("#rater", 'P "7" <b>')
        page.click("#begin")
        shown = page.eval_on_selector_all("fieldset", "fs => fs.map(f => f.dataset.stimulus)")
        assert sorted(shown) == sorted(study.lists[0])
        page.click("#download")  # nothing answered yet: refused
        assert "missing" in page.inner_text("#status")
        for sid in shown:
            page.check(f'input[name="{sid}::rating"][value="{wanted[sid]}"]')
        with page.expect_download() as info:
            page.click("#download")
        path = tmp_path / "answers.csv"
        info.value.save_as(path)
        browser.close()
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert [r["stimulus"] for r in rows] == shown
    assert {r["stimulus"]: int(r["rating"]) for r in rows} == wanted
    assert {r["rater"] for r in rows} == {'P "7" <b>'} and {r["list"] for r in rows} == {"1"}
    r = runner.invoke(app, ["human", "import", str(tmp_path / "study" / "study.json"), str(path), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["raters"] == ['P "7" <b>'] and report["excluded_raters"] == []


@pytest.mark.slow
def test_form_shows_markup_in_stimuli_as_text(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("no chromium at /usr/bin/chromium (make test installs it)")
    hostile = 'The page said </script><b id="injected">hi</b> & left.'
    data = tmp_path / "pairs.csv"
    with open(data, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["pair_id", "Sentence_A", "Sentence_B", "rating_anticonic_causal", "rating_iconic_causal",
                    "rating_anticonic_temporal", "rating_iconic_temporal"])
        w.writerow([0, "The man smiled.", hostile, 3, 4, 5, 6])
    r = runner.invoke(app, ["human", "export", "explica", "--dataset", str(data), "--attention", "0",
                            "--out", str(tmp_path / "study")])
    assert r.exit_code == 0, r.output
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((tmp_path / "study" / "form.html").as_uri())
        page.fill("#rater", "R1")
        page.click("#begin")
        texts = page.eval_on_selector_all(".stimulus", "ps => ps.map(p => p.textContent)")
        injected = page.query_selector("#injected")
        browser.close()
    assert injected is None
    assert len(texts) == 4 and all('</script><b id="injected">hi</b> &' in t for t in texts)
