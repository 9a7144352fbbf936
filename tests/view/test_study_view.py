"""A study inside ``lingdiag view`` (a real process, driven in headless Chromium): the study is one
group whose page holds the grid in the study's order (steps numerically: 500, 1000, 2000), the runs
not done with their reasons, the models, the chosen comparisons and the study report; an item page of
a study run shows the item in every other model and checkpoint with the records' own labels, and the
item's learning curve; hostile study and model names stay text and reverse nothing around them; a
study being written while viewed shows its new records.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag, png_colours, stand_in, study_backend

from lingdiag.rundir import RunStore
from lingdiag.study.execute import run_study
from lingdiag.study.schema import StudyFile

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"
HOSTILE = '<img src=x onerror="window.pwned=1">\u202eevil ' + "w" * 300
STUDY_NAME = "<script>window.pwned=2</script> \u05e9\u05dc\u05d5\u05dd"
ORDER = ["a", HOSTILE, "tiny@step500", "tiny@step1000", "tiny@step2000", "broken-x"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("study-view")
    spec = StudyFile.model_validate({
        "name": STUDY_NAME, "base": root, "retries": 0,
        "models": [{"name": "tiny", "family": "T", "checkpoints": [{"spec": f"t{k}", "step": k}
                                                                   for k in (1000, 500, 2000)]},
                   {"spec": "broken-x", "family": "Z"},
                   {"spec": "c", "name": HOSTILE, "family": "G", "size": "1B"},
                   {"spec": "a", "family": "F", "size": "135M"}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"},
                   {"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                    "axes": {"strategy": ["zero-shot", "dap"]}, "name": "nli"}],
        "compare": [["a", HOSTILE]]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(root / "cache"))
        run_study(spec, root / "study", models=stand_in(study_backend))
    return root


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    yield page
    assert page.evaluate("window.pwned") is None
    context.close()


def _cells(page: Any, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(selector, "rs => rs.map(r => [...r.children].map(c => c.textContent))")


def _records(root: Path, key: str) -> dict[tuple[str, str], Any]:
    return {(r.condition, r.item_id): r for r in RunStore(root / "study" / "runs" / key).load_records()}


def test_the_study_is_one_group_with_its_grid_in_order_and_what_failed(server: str, page: Any) -> None:
    page.goto(server)
    studies = page.locator("#studies li")
    assert studies.count() == 1 and "(10 runs, study)" in studies.first.inner_text()
    with page.expect_navigation():
        studies.first.locator("a").click()
    assert page.locator("h1").inner_text() == f"study {STUDY_NAME}"
    grid = _cells(page, "#study-runs tbody tr")
    assert [r[0] for r in grid] == [m for m in ORDER for _ in range(2)]  # family, size, then step numerically
    assert [(r[3], r[4]) for r in grid[:10]] == [("done", "16/16")] * 10
    models = _cells(page, "#study-models tbody tr")
    assert [r[0] for r in models] == ORDER and [r[3] for r in models[2:5]] == ["500", "1000", "2000"]
    failed = page.locator("#study-not-done li").all_inner_texts()
    assert len(failed) == 2 and all(f.startswith("broken-x × ") and "gave up" in f and "cannot load broken-x" in f
                                    for f in failed)
    assert page.locator("img[src=x]").count() == 0 and page.locator("script").count() == 0


def test_the_study_report_is_reachable(server: str, page: Any) -> None:
    page.goto(f"{server}group?id=g:0/study")
    with page.expect_navigation():
        page.click("text=The study report")
    assert page.locator("#study-compare").count() == 1 and page.locator("#study-failed").count() == 1
    chosen = _cells(page, "#study-compare tbody tr")
    assert {(r[3], r[4]) for r in chosen} == {("a", HOSTILE)} and len(chosen) == 3  # pairs + nli's two conditions
    assert "broken-x × pairs: gave up" in page.locator("#study-failed").inner_text()
    curve = page.locator("#study-curves img")  # one figure per model with checkpoints, one line per cell
    assert curve.count() == 1 and curve.first.evaluate("i => i.complete && i.naturalWidth") > 0
    png = base64.b64decode(curve.first.get_attribute("src").split(",", 1)[1])
    assert "#777777" in png_colours(png)  # the chance line
    assert "dashed: chance" in page.locator("#study-curves figcaption").inner_text()


def test_a_chosen_comparison_opens_lingdiag_compares_numbers(server: str, page: Any, root: Path) -> None:
    page.goto(f"{server}group?id=g:0/study")
    links = page.locator("#study-compare li a")
    assert links.count() == 2
    assert "on nli" in links.nth(1).inner_text()
    with page.expect_navigation():
        links.nth(1).click()
    shown = {r[0]: r for r in _cells(page, "#tests tbody tr")}
    key_c = next(p.name for p in (root / "study" / "runs").iterdir() if p.name.startswith("img"))
    done = lingdiag(root, "compare", str(root / "study/runs/a/nli"), str(root / f"study/runs/{key_c}/nli"), "--json")
    expected = {r["condition"]: r for r in json.loads(done.stdout)["rows"]}
    assert set(shown) == set(expected)
    for condition, r in expected.items():
        assert shown[condition][1] == str(r["n"]) and shown[condition][8] == f"{r['p']:.3g}"
        assert shown[condition][9] == f"{r['p_holm']:.3g}"


def test_an_item_of_a_study_run_shows_every_other_model_and_checkpoint(server: str, page: Any, root: Path) -> None:
    page.goto(f"{server}item?id=0/study/runs/a/pairs&line=3")
    item = page.locator("#record p").first.inner_text().split("item ")[1].split(":")[0]
    rows = _cells(page, "#across tbody tr")
    assert [r[0] for r in rows] == [HOSTILE, "tiny@step500", "tiny@step1000", "tiny@step2000"]
    keys = {HOSTILE: next(p.name for p in (root / "study" / "runs").iterdir() if p.name.startswith("img")),
            "tiny@step500": "tiny_step500", "tiny@step1000": "tiny_step1000", "tiny@step2000": "tiny_step2000"}
    for row in rows:
        record = _records(root, f"{keys[row[0]]}/pairs")[("simple/lingdiag", item)]
        assert (row[5], row[6], row[7]) == (record.condition, record.label, record.gold)
        lps = [o.logprob for o in record.outputs]
        margin = abs(lps[0] - lps[1])
        assert row[9] == f"margin {margin if record.correct else -margin:+.3f}"
    with page.expect_navigation():
        page.click("text=This item across the study, with its learning curve")
    assert [r[0] for r in _cells(page, "#across tbody tr")] == ["a", *(r[0] for r in rows)]
    curve = page.locator(".curve[data-model=tiny]")
    assert curve.count() == 1
    assert curve.locator("circle").count() == 3
    points = _cells(page, ".curve[data-model=tiny] tbody tr")
    assert [p[1] for p in points] == ["500", "1000", "2000"]
    for p in points:
        record = _records(root, f"tiny_step{p[1]}/pairs")[("simple/lingdiag", item)]
        assert p[2] == ("right" if record.correct else "wrong")


def test_hostile_names_are_text_and_isolated(server: str, page: Any) -> None:
    page.goto(f"{server}group?id=g:0/study")
    text = page.locator("#study-compare li").first.inner_text()
    assert text.startswith("a vs ") and HOSTILE in text  # the override reverses nothing after it
    isolated = page.eval_on_selector_all("#study-compare li bdi", "bs => bs.map(b => b.textContent)")
    assert HOSTILE in isolated
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width < 4000, width


def test_a_study_written_while_viewed_shows_its_new_records(server: str, page: Any, root: Path) -> None:
    """A run of the study rewritten as a process writes it (its lock held): the study page says running, and
    the item across the study finds the new run's records by scanning them (no summary of a run in flight)."""
    run = root / "study" / "runs" / "a" / "pairs"
    kept = run.parent / "pairs.kept"
    shutil.copytree(run, kept)
    lines = (kept / "items.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    meta = json.loads((kept / "meta.json").read_text())
    del meta["finished"]
    meta["planned"] = len(lines)
    try:
        with RunStore(run).lock():
            (run / "meta.json").write_text(json.dumps(meta))
            (run / "items.jsonl").write_text("".join(lines[:4]), encoding="utf-8")
            page.goto(f"{server}group?id=g:0/study")
            row = next(r for r in _cells(page, "#study-runs tbody tr") if r[0] == "a" and r[1] == "pairs")
            assert (row[3], row[4]) == ("running", "4/16")
            item = json.loads(lines[2])["item_id"]
            page.goto(f"{server}study-item?id=g:0/study&item={item}")
            assert "a" in [r[0] for r in _cells(page, "#across tbody tr")]
            late = json.loads(lines[10])["item_id"]
            page.goto(f"{server}study-item?id=g:0/study&item={late}")
            assert "a" not in [r[0] for r in _cells(page, "#across tbody tr")]
            with open(run / "items.jsonl", "a", encoding="utf-8") as f:
                f.write("".join(lines[4:]))
            page.reload()
            assert "a" in [r[0] for r in _cells(page, "#across tbody tr")]
    finally:
        shutil.rmtree(run)
        kept.rename(run)
