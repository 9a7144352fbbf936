"""What the viewer reads, on every page alike: each record within one bound (the run page and the background
summary as the items page), only the runs inside the served directory (a study run replaced by a symlink out
is not read on the study's pages), and each planned checkpoint on an item's learning curve, measured or not."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import stand_in, study_backend

from lingdiag.models.mock import MockBackend
from lingdiag.study.execute import run_study
from lingdiag.study.schema import StudyFile
from lingdiag.view.app import PAGES, Viewer
from lingdiag.view.files import Refused
from lingdiag.view.study import Summaries, study_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _load(config: Any) -> Any:
    """The study's stand-ins; ``flaky`` fails every request (its run is written, and given up), naming itself
    by another model name than its study name, as a server does."""
    if config.model != "flaky":
        return study_backend(config)

    def fail(r: Any) -> float:
        raise RuntimeError("server hiccup")
    return MockBackend(loglik_fn=fail, name="served-name")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    spec = StudyFile.model_validate({
        "name": "s", "base": root, "retries": 0,
        "models": [{"name": "t", "family": "T", "checkpoints": [{"spec": f"{s}{k}", "step": k} for s, k in
                                                                 (("t", 500), ("broken", 750), ("t", 1000))]},
                   {"spec": "a", "family": "A", "size": "1B"}, {"spec": "flaky", "family": "A", "size": "2B"}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}],
        "compare": [["a", "t@step750"], ["a", "t@step1000"], ["a", "flaky"]]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(root / "cache"))
        run_study(spec, root / "study", models=stand_in(_load))
    return root


def test_a_record_over_the_bound_is_refused_on_every_read(root: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    run = Path(shutil.copytree(root / "study" / "runs" / "a" / "pairs", tmp_path / "served" / "run"))
    lines = (run / "items.jsonl").read_text().splitlines(keepends=True)
    big = json.loads(lines[0])
    big["tags"] = {**big["tags"], "note": "x" * 20_000}  # still a record: only its size is over the bound below
    (run / "items.jsonl").write_text(json.dumps(big) + "\n" + "".join(lines[1:]))
    monkeypatch.setenv("LINGDIAG_VIEW_MAX_RECORD_BYTES", "10000")
    v = Viewer([tmp_path / "served"])
    page = v.report(v.run("0/run"))
    assert "no report yet" in page and "line 1:" in page and "LINGDIAG_VIEW_MAX_RECORD_BYTES" in page
    with pytest.raises(Refused, match="line 1: 2[0-9]{4} bytes"):
        Summaries().of(run)
    summaries = Summaries()
    summaries.prebuild([run]).join(timeout=60)
    assert summaries.current(run) is None  # the background left it to its page, unread
    monkeypatch.delenv("LINGDIAG_VIEW_MAX_RECORD_BYTES")
    assert len(Summaries().of(run).columns) == len(lines)


def test_a_study_run_leading_out_of_the_served_directory_is_not_read(root: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_STUDY_IRT_RECORDS", "1")  # the report's item fit, beside the point here
    monkeypatch.setenv("LINGDIAG_STUDY_MIXED_RECORDS", "1")
    served = Path(shutil.copytree(root / "study", tmp_path / "served" / "study", symlinks=True))
    elsewhere = Path(shutil.copytree(served / "runs" / "a" / "pairs", tmp_path / "elsewhere" / "pairs"))
    shutil.rmtree(served / "runs" / "a" / "pairs")
    (served / "runs" / "a" / "pairs").symlink_to(elsewhere, target_is_directory=True)
    v = Viewer([tmp_path / "served"])
    cat = v.catalog()
    study = study_of(cat.groups["g:0/study"], cat)
    row = next(r for r in study.grid() if r.model == "a")
    assert row.status == "unreadable" and "served directory" in (row.reason or "")
    report = PAGES["/study"](v, {"id": "g:0/study"})
    assert "a/pairs: not a run inside the served directory" in report
    assert "<td>a</td>" not in report.split('id="study-accuracy"', 1)[1].split("</section>", 1)[0]


def test_the_item_curve_marks_a_checkpoint_that_was_not_measured(root: Path) -> None:
    v = Viewer([root])
    page = PAGES["/study-item"](v, {"id": "g:0/study", "item": "dn2"})
    curve = page.split('id="item-curves"', 1)[1]
    assert [c for c in ("t@step500", "t@step750", "t@step1000") if c in curve] == ["t@step500", "t@step750",
                                                                                  "t@step1000"]
    assert curve.index("t@step500") < curve.index("t@step750") < curve.index("t@step1000")  # training order
    assert "not measured (gave up)" in curve and 'class="missing"' in curve
    assert curve.count("<polyline") >= 2  # the line breaks at the missing checkpoint
    assert ">step 500</text>" in curve and "<th>Step</th>" in curve
    assert os.path.isdir(root / "study" / "runs" / "t_step500")


def test_the_runs_list_names_orders_and_counts_a_study_as_its_grid(root: Path) -> None:
    v = Viewer([root])
    page = PAGES["/"](v, {})
    runs = page.split('id="runs"', 1)[1].split("</section>", 1)[0]
    rows = [r.split("</tr>", 1)[0] for r in runs.split("<tr>")[2:]]
    cat = v.catalog()
    grid = study_of(cat.groups["g:0/study"], cat).grid()
    done = [r for r in grid if r.key != "t_step750/pairs"]  # the checkpoint that gave up has no directory
    assert [next(c for c in (r.model for r in done) if f">{c}<" in row) for row in rows] == [r.model for r in done]
    assert [r.model for r in done] == ["a", "flaky", "t@step500", "t@step1000"]  # study names, steps numerically
    assert "served-name" not in runs and "gave up" in rows[1]
    assert all(f"{r.items_done} / {r.items_total}" in row for r, row in zip(done, rows, strict=True))


def test_a_chosen_pair_with_a_side_not_done_is_named_not_linked(root: Path) -> None:
    v = Viewer([root])
    page = PAGES["/group"](v, {"id": "g:0/study"})
    chosen = page.split('id="study-compare"', 1)[1].split("</section>", 1)[0]
    assert "not compared (<bdi>t@step750</bdi> gave up)" in chosen
    assert "not compared (<bdi>flaky</bdi> gave up)" in chosen  # its run is there: the link answered 400
    assert chosen.count('href="/compare') == 1  # a vs t@step1000 only: every link opens a comparison
    link = chosen.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    from urllib.parse import parse_qsl, urlsplit

    assert "A − B" in PAGES["/compare"](v, dict(parse_qsl(urlsplit(link).query)))


def test_a_curve_by_tokens_says_tokens() -> None:
    from lingdiag.view.study import ItemPoint
    from lingdiag.view.studypages import curves_html

    points = [ItemPoint("m@1e+06tok", 1e6, True, 0.5, "tokens"), ItemPoint("m@2e+06tok", 2e6, None, None, "tokens",
                                                                           "not measured (gave up)"),
              ItemPoint("m@3e+06tok", 3e6, False, -0.2, "tokens")]
    html = curves_html({("m", "s", "c"): points})
    assert ">tokens 1e+06</text>" in html and "<th>Tokens</th>" in html and "step" not in html
    assert "not measured (gave up)" in html and html.count("<polyline") == 2
