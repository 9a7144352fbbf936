"""A study in the viewer, in-process (the pages as functions): the runs' summaries kept while their files
are unchanged and read again when they change, a symlink out of a run refused, an item across the study
in the study's order with its curve in numeric step order, a run in flight scanned rather than
summarised, and a damaged ``study.json`` read as a plain group with the reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import stand_in, study_backend

from lingdiag.errors import RunError
from lingdiag.records import ScoreOutput
from lingdiag.rundir import RunStore
from lingdiag.study.execute import run_study
from lingdiag.study.schema import StudyFile
from lingdiag.view.app import PAGES, Viewer
from lingdiag.view.study import Summaries, item_curves, study_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view-study")
    spec = StudyFile.model_validate({
        "name": "s", "base": root,
        "models": [{"name": "t", "family": "T", "checkpoints": [{"spec": f"t{k}", "step": k} for k in (1000, 500)]},
                   {"spec": "a", "family": "A", "size": "1B"}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(root / "cache"))
        run_study(spec, root / "study", models=stand_in(study_backend))
    return root


def test_summaries_are_kept_until_the_files_change(root: Path, tmp_path: Path) -> None:
    import shutil

    run = Path(shutil.copytree(root / "study" / "runs" / "a" / "pairs", tmp_path / "run"))
    summaries = Summaries()
    first = summaries.of(run)
    assert summaries.of(run) is first and summaries.current(run) is first
    lines = (run / "items.jsonl").read_text().splitlines(keepends=True)
    (run / "items.jsonl").write_text("".join(lines[:-1]))
    assert summaries.current(run) is None
    assert len(summaries.of(run).columns) == len(lines) - 1


def test_a_symlink_out_of_a_run_is_refused(root: Path, tmp_path: Path) -> None:
    import shutil

    run = Path(shutil.copytree(root / "study" / "runs" / "a" / "pairs", tmp_path / "run"))
    outside = tmp_path / "secret.jsonl"
    os.replace(run / "items.jsonl", outside)
    (run / "items.jsonl").symlink_to(outside)
    with pytest.raises(RunError, match="outside the run directory"):
        Summaries().of(run)


def test_an_item_across_the_study_in_its_order(root: Path) -> None:
    v = Viewer([root])
    html = PAGES["/study-item"](v, {"id": "g:0/study", "item": "dn2"})
    models = [x.split('data-model="', 1)[1].split('"', 1)[0] for x in html.split('<tr class="item-row')[1:]]
    assert models == ["a", "t@step500", "t@step1000"]  # family A before T; steps numerically
    study = study_of(v.catalog().groups["g:0/study"], v.catalog())
    from lingdiag.view.app import _across

    rows = _across(v, study, "dn2")
    curve = item_curves(rows)[("t", "pairs", "simple/lingdiag")]
    assert [p.checkpoint for p in curve] == ["t@step500", "t@step1000"]
    for p, row in zip(curve, rows[1:], strict=True):
        lps = [float(o.logprob) for o in row.record.outputs if isinstance(o, ScoreOutput) and o.logprob is not None]
        assert p.margin == pytest.approx(abs(lps[0] - lps[1]) * (1 if row.record.correct else -1))
    assert "No run of the study holds item" in PAGES["/study-item"](v, {"id": "g:0/study", "item": "<nobody>"})


def test_a_run_in_flight_is_scanned_not_summarised(root: Path) -> None:
    v = Viewer([root])
    run = root / "study" / "runs" / "a" / "pairs"
    with RunStore(run).lock():
        html = PAGES["/study-item"](v, {"id": "g:0/study", "item": "dn2"})
    assert 'data-model="a"' in html and v.summaries.current(run) is None


def test_a_damaged_study_json_is_a_plain_group_with_why(root: Path, tmp_path: Path) -> None:
    import shutil

    copy = Path(shutil.copytree(root / "study", tmp_path / "study"))
    (copy / "study.json").write_text(json.dumps({"name": "s", "runs": "nope"}))
    v = Viewer([tmp_path])
    html = PAGES["/group"](v, {"id": "g:0/study"})
    assert "not read as a study" in html and "study.json" in html
    item = PAGES["/item"](v, {"id": "0/study/runs/a/pairs", "line": "0"})
    assert "This item in other runs" in item  # the plain group's peers, not an error
