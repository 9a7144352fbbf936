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


def answer_form(form: Path, rater: str, ratings: dict[str, int], save: Path) -> tuple[Path, list[str], str]:
    """In Chromium, a rater types ``rater``, answers the scale of each stimulus and downloads the
    file to ``save``; also the stimuli shown, in order, and the status after an early download."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(accept_downloads=True)
        page.goto(form.as_uri() + "?list=1")
        page.fill("#rater", rater)
        page.click("#begin")
        shown = page.eval_on_selector_all("fieldset", "fs => fs.map(f => f.dataset.stimulus)")
        page.click("#download")
        status = page.inner_text("#status")
        for sid in shown:
            page.check(f'input[name="{sid}::rating"][value="{ratings[sid]}"]')
        with page.expect_download() as info:
            page.click("#download")
        info.value.save_as(save)
        browser.close()
    return save, shown, status


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
    wanted = {sid: (expected["rating"] if (expected := by_id[sid].expected) else 1 + i % 10)
              for i, sid in enumerate(study.lists[0])}
    path, shown, status = answer_form(tmp_path / "study" / "form.html", 'P "7" <b>', wanted, tmp_path / "answers.csv")
    assert sorted(shown) == sorted(study.lists[0])
    assert "missing" in status  # a download before anything is answered is refused
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


@pytest.mark.slow
def test_the_download_neutralises_formulas_and_imports_back(tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("no chromium at /usr/bin/chromium (make test installs it)")
    r = runner.invoke(app, ["human", "export", "explica", "--limit", "2", "--attention", "1",
                            "--out", str(tmp_path / "study")])
    assert r.exit_code == 0, r.output
    study = Study.read(tmp_path / "study" / "study.json")
    wanted = {s.id: s.expected["rating"] if s.expected else 3 for s in study.stimuli}
    path, _, _ = answer_form(tmp_path / "study" / "form.html", "=1+1\x00", wanted, tmp_path / "answers.csv")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert {r["rater"] for r in rows} == {"'=1+1\ufffd"}  # a spreadsheet shows it as text; no NUL
    r = runner.invoke(app, ["human", "import", str(tmp_path / "study" / "study.json"), str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["raters"] == ["=1+1\ufffd"]  # the quote comes off on reading
