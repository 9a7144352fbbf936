"""``lingdiag view`` as a real process, driven in a real headless Chromium: the run list, a filter, the
compare page against ``lingdiag compare``, an item beside its record in the other run, the surprisal
colouring against the record's log-probs (a SyntaxGym run of SmolLM2 with --per-token), a run that gains
records while the page is open; hostile records shown as text; paths and symlinks out refused.

With ``LINGDIAG_SCREENSHOTS=1`` the test also writes the screenshots of docs/viewer.md into docs/img/.
"""

from __future__ import annotations

import http.client
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import lingdiag

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.records import UNPARSED, GenerationRequest
from lingdiag.rundir import RunStore

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> \u202eTrue \u05e9\u05dc\u05d5\u05dd'
HUGE = "\u05d0" + "x" * 1_000_000
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
SYNTAXGYM = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "syntaxgym" / "number_src.json"


def _text(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages)


def model_a(req: GenerationRequest) -> str:
    n = len(_text(req))
    return HOSTILE if n % 5 == 0 else ("True" if n % 3 else "False")


def model_b(req: GenerationRequest) -> str:
    n = len(_text(req))
    return HUGE if n % 11 == 0 else ("False" if n % 2 else "True")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view")
    for name, answer in (("a", model_a), ("b", model_b)):
        backend = MockBackend(answer, name=f"mock-{name}")
        evaluate(RunConfig(suite="imperfective", model=backend.name, dataset="builtin",
                           axes={"strategy": ["zero-shot", "dap"]}, limit=30), backend, root / "study" / name)
    (root / "study" / "study.json").write_text("{}")
    if not SYNTAXGYM.exists():
        pytest.fail(f"{SYNTAXGYM} is missing (the shared SyntaxGym suites)")
    done = lingdiag(root, "run", "syntaxgym", "--model", "smollm2-135m", "--dataset", str(SYNTAXGYM), "--limit", "1",
                    "--per-token", "--out", str(root / "sg"), timeout=900)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page
    context.close()
    assert not [e for e in errors if "Content Security Policy" not in e], errors


def _shot(page: Any, name: str) -> None:
    if os.environ.get("LINGDIAG_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_IMG / f"view-{name}.png"))


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "items.jsonl").read_text(encoding="utf-8").split("\n") if line]


def test_run_list_and_a_filter(server: str, page: Any, root: Path) -> None:
    page.goto(server)
    rows = page.locator("#runs tbody tr")
    cells = [rows.nth(k).locator("td").all_inner_texts() for k in range(rows.count())]
    by_id = {c[0]: c for c in cells}
    assert set(by_id) == {"0/sg", "0/study/a", "0/study/b"}
    assert by_id["0/study/a"][1:3] == ["imperfective", "mock-a"]
    assert by_id["0/study/a"][4] == "60 / 60" and by_id["0/study/a"][5] == "finished"
    studies = page.locator("#studies li").all_inner_texts()
    assert any(s.endswith("/study (2 runs, study)") for s in studies), studies
    _shot(page, "runs")
    with page.expect_navigation():
        page.click("text=0/study/a")
    assert page.locator("#summary").count() == 1  # a run's page is its report
    with page.expect_navigation():
        page.click("text=Items of this run")
    page.select_option("select[name=outcome]", "wrong")
    with page.expect_navigation():
        page.click("button:has-text('filter')")
    outcomes = page.locator("#items tbody tr td:last-child").all_inner_texts()
    wrong = [r for r in _records(root / "study" / "a") if r["correct"] is False and r["label"] != UNPARSED]
    assert outcomes == ["wrong"] * len(wrong) and wrong
    _shot(page, "items")


def test_compare_counts_equal_lingdiag_compare(server: str, page: Any, root: Path) -> None:
    a, b = root / "study" / "a", root / "study" / "b"
    done = lingdiag(root, "compare", str(a), str(b), "--json")
    assert done.returncode == 0, done.stderr
    expected = {r["condition"]: r for r in json.loads(done.stdout)["rows"]}
    page.goto(f"{server}compare?a=0/study/a&b=0/study/b")
    rows = page.locator("#tests tbody tr")
    shown = {c[0]: c for c in (rows.nth(k).locator("td").all_inner_texts() for k in range(rows.count()))}
    assert set(shown) == set(expected)
    for condition, r in expected.items():
        assert shown[condition][1] == str(r["n"])
        assert (shown[condition][6], shown[condition][7]) == (str(r["only_a"]), str(r["only_b"]))
        assert shown[condition][8] == f"{r['p']:.3g}"
    counts = page.locator("#pair-counts").inner_text()
    assert f"A right, B wrong: {sum(r['only_a'] for r in expected.values())}" in counts
    first = page.locator("tr.pair").first
    assert first.get_attribute("data-kind") == "A right, B wrong"  # disagreements first
    _shot(page, "compare")
    links = first.locator("a")
    with page.expect_navigation():
        links.nth(1).click()  # A's label: A's record in full
    assert "0/study/a" in page.locator("h1").inner_text() and "correct" in page.locator("#record p").first.inner_text()


def test_the_compare_page_pages_its_pairs(server: str, page: Any, root: Path) -> None:
    """The issue's 90 pairs rendered in full (67,000 px): pairs are now table rows, 100 a page."""
    page.goto(f"{server}compare?a=0/study/a&b=0/study/b")
    n = page.locator("tr.pair").count()
    assert n == 60 and page.locator("#pair-range").inner_text() == f"pairs 1–{n} of {n}"
    assert page.evaluate("document.body.scrollHeight") < 8000


def test_an_item_beside_its_record_in_the_other_run(server: str, page: Any, root: Path) -> None:
    records_b = _records(root / "study" / "b")
    line = next(k for k, r in enumerate(records_b) if r["outputs"] == [HUGE])
    page.goto(f"{server}item?id=0/study/b&line={line}")
    assert page.locator("#record pre").filter(has_text="xxxxxxxxxx").first.inner_text().startswith(HUGE[:100])
    others = page.locator("#others .side-by-side > div")
    assert others.count() >= 1
    record_a = next(r for r in _records(root / "study" / "a")
                    if r["item_id"] == records_b[line]["item_id"] and r["condition"] == records_b[line]["condition"])
    assert record_a["outputs"][0] in others.first.inner_text()


def test_hostile_output_is_text(server: str, page: Any, root: Path) -> None:
    records = _records(root / "study" / "a")
    line = next(k for k, r in enumerate(records) if r["outputs"] == [HOSTILE])
    page.goto(f"{server}item?id=0/study/a&line={line}")
    assert page.evaluate("window.pwned") is None
    assert page.locator("script").count() == 0 and page.locator("#record img").count() == 0
    assert HOSTILE in page.locator("#record").inner_text()
    page.goto(f"{server}items?id=0/study/a&text=onerror")
    assert page.evaluate("window.pwned") is None
    assert page.locator("#items tbody tr").count() == sum(HOSTILE in r["outputs"] for r in records)


def test_surprisal_colours_carry_the_records_values(server: str, page: Any, root: Path) -> None:
    record = _records(root / "sg")[0]
    page.goto(f"{server}item?id=0/sg&line=0")
    scored = page.locator(".scored")
    assert scored.count() == len(record["outputs"])
    for k, output in enumerate(record["outputs"]):
        bits = [float(x) for x in scored.nth(k).locator(".tok").evaluate_all("ts => ts.map(t => t.dataset.bits)")]
        assert bits == [round(-lp / math.log(2), 6) for lp in output["token_logprobs"]]
    for k in range(scored.count()):  # each text's regions are its own condition's
        regions = scored.nth(k).locator(".region").all_inner_texts()
        contents = record["fields"]["conditions"][scored.nth(k).get_attribute("data-name")]
        assert [r.split(": ", 1)[1] for r in regions] == [c for c in contents if c]
    scored.first.scroll_into_view_if_needed()
    _shot(page, "surprisal")
    # Formulas over region surprisals decided the label: no "margin" between the best two sentences.
    assert "Margin" not in page.locator("#record").inner_text()
    decided = page.locator("#record .predictions").inner_text()
    held = record["detail"]["predictions"]
    assert decided.startswith("Decided by its predictions") and decided.count("holds") == sum(held)


def test_a_growing_run_shows_its_new_records(server: str, page: Any, root: Path) -> None:
    live = root / "live"
    live.mkdir()
    # meta.json as a session writes it while it runs: the items planned, no end yet.
    RunStore(live).write_meta(RunStore(root / "study" / "a").read_meta().replaced(planned=60, finished=None))
    lines = (root / "study" / "a" / "items.jsonl").read_text(encoding="utf-8").split("\n")
    with RunStore(live).lock():  # a live process holds the run
        (live / "items.jsonl").write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
        page.goto(server)
        row = page.locator("#runs tbody tr", has_text="0/live")
        assert row.locator("td").all_inner_texts()[4:6] == ["5 / 60", "running"]
        with open(live / "items.jsonl", "a", encoding="utf-8") as f:
            f.write("\n".join(lines[5:12]) + "\n")
        page.reload()
        assert row.locator("td").nth(4).inner_text() == "12 / 60"
    page.reload()  # the process let go before its end: stopped, from the run directory's own state
    assert row.locator("td").nth(5).inner_text() == "stopped: run not finished (stopped): 12 of 60 items"


def _get(server: str, path: str, host: str | None = None) -> int:
    where = urlsplit(server)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    conn.request("GET", path, headers={"Host": host} if host else {})  # sent as written: no dots normalised away
    status = conn.getresponse().status
    conn.close()
    return status


def test_paths_and_symlinks_out_are_refused(server: str, root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("private")
    sg_table = root / "sg" / "table.md"
    kept = sg_table.read_text()
    sg_table.unlink()
    sg_table.symlink_to(secret)
    try:
        assert _get(server, "/raw?id=0/sg&name=table.md") == 403
    finally:
        sg_table.unlink()
        sg_table.write_text(kept)
    assert _get(server, "/raw?id=0/sg&name=table.md") == 200
    assert _get(server, "/../") == 404
    assert _get(server, "/../../etc/passwd") == 404
    assert _get(server, "/raw?id=0/sg&name=../../etc/passwd") == 403
    assert _get(server, "/run?id=../../etc") == 404
    assert _get(server, "/", host="attacker.example") == 400  # a rebound name reaches nothing
    assert _get(server, "/", host=f"localhost:{urlsplit(server).port}") == 200
