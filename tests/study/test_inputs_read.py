"""A study's runs keep their state when the study project moves or is copied, when a suite file gets a
comment or a CSV/JSONL a blank line; a file added to a dataset folder, or an input that is gone, is
never shown as done and current (``lingdiag.rundir.inputs``, ``lingdiag.io.content``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import stand_in, study_backend
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import RunError
from lingdiag.study.execute import SUPERSEDED, run_study
from lingdiag.study.loaded import load
from lingdiag.study.schema import load_study
from lingdiag.study.status import grid

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))


def _project(root: Path) -> Path:
    """A study project: a suite file with its data, a data file for a built-in suite, the study file."""
    root.mkdir()
    for name in ("agreement-pairs.yaml", "agreement-pairs.jsonl", "imperfective-nli-sample.json"):
        shutil.copy(EXAMPLES / name, root / name)
    (root / "study.yaml").write_text(
        "models: [{spec: a}]\nretries: 0\nsuites:\n"
        "  - {suite: agreement-pairs.yaml, name: pairs}\n"
        "  - {suite: imperfective, dataset: imperfective-nli-sample.json, axes: {strategy: zero-shot}, name: nli}\n")
    return root


def _run(project: Path) -> None:
    run_study(load_study(project / "study.yaml"), project / "out", models=stand_in(study_backend))


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _status(out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_cli("study", "status", str(out), "--json"))
    return data


def test_a_study_project_moved_to_another_path_keeps_every_run_s_state(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    _run(project)
    before = _status(project / "out", capsys)
    assert before["summary"]["done"] == 2
    moved = Path(shutil.copytree(project, tmp_path / "elsewhere" / "q"))
    shutil.rmtree(project)  # moved, not copied: nothing left where the runs were written
    assert _status(moved / "out", capsys) == before
    said: list[str] = []
    run_study(load_study(moved / "study.yaml"), moved / "out", models=stand_in(study_backend), say=said.append)
    assert said == ["2 of 2 runs done"] and not (moved / "out" / SUPERSEDED).exists()
    assert _status(moved / "out", capsys) == before


def test_a_copied_project_reads_its_own_files_not_the_original_s(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    _run(project)
    copy = Path(shutil.copytree(project, tmp_path / "q"))
    data = copy / "imperfective-nli-sample.json"
    items = json.loads(data.read_text())
    items[0]["premise"] += " Nobody saw it."
    data.write_text(json.dumps(items))
    stale = {r["key"]: r["status"] for r in _status(copy / "out", capsys)["runs"]}
    assert stale == {"a/pairs": "done", "a/nli": "stale"}
    assert {r["status"] for r in _status(project / "out", capsys)["runs"]} == {"done"}


def test_a_comment_in_the_suite_file_or_a_blank_line_in_the_data_stales_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    _run(project)
    suite, data = project / "agreement-pairs.yaml", project / "agreement-pairs.jsonl"
    suite.write_text("# a comment added after the runs\n" + suite.read_text().replace("\n\n", "\n\n# another\n\n"))
    data.write_text(data.read_text().replace("\n", "\n\n", 3) + "\n\n")
    nli = project / "imperfective-nli-sample.json"
    nli.write_text(json.dumps(json.loads(nli.read_text()), indent=7))  # the same JSON, laid out otherwise
    assert {r["status"] for r in _status(project / "out", capsys)["runs"]} == {"done"}
    said: list[str] = []
    run_study(load_study(project / "study.yaml"), project / "out", models=stand_in(study_backend), say=said.append)
    assert said == ["2 of 2 runs done"]
    # What is read does change: one pair's sentence.
    data.write_text(data.read_text().replace("these apples", "those apples", 1))
    rows = {r["key"]: r for r in _status(project / "out", capsys)["runs"]}
    assert rows["a/pairs"]["status"] == "stale" and "agreement-pairs.jsonl changed" in rows["a/pairs"]["reason"]


def _pairs_folder(folder: Path, lines: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "part1.jsonl").write_text("".join(lines))


def test_a_file_added_to_a_dataset_folder_is_seen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (EXAMPLES / "agreement-pairs.jsonl").read_text().splitlines(keepends=True)
    folder = tmp_path / "pairs"
    _pairs_folder(folder, lines[:7])
    (tmp_path / "study.yaml").write_text(
        "models: [{spec: a}]\nretries: 0\nsuites: [{suite: minimal-pairs, dataset: ./pairs, name: pairs}]\n")
    out = tmp_path / "out"
    run_study(load_study(tmp_path / "study.yaml"), out, models=stand_in(study_backend))
    assert [r.status for r in grid(out)] == ["done"]
    (folder / "part2.jsonl").write_text("".join(lines[7:]))  # 9 more pairs: 7 of 16 were run
    (row,) = grid(out)
    assert row.status == "stale" and row.reason is not None and "pairs changed since it ran" in row.reason
    assert load(out).runs == []  # the 7-pair numbers are not the study's
    said: list[str] = []
    run_study(load_study(tmp_path / "study.yaml"), out, models=stand_in(study_backend), say=said.append)
    (row,) = grid(out)
    assert (row.status, row.items_done) == ("done", 16)


def test_a_run_whose_inputs_are_gone_is_unchecked_everywhere(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    _run(project)
    (project / "imperfective-nli-sample.json").unlink()
    (project / "agreement-pairs.yaml").unlink()
    data = _status(project / "out", capsys)
    assert data["summary"]["done"] == 0 and data["summary"]["unchecked"] == 2
    row = next(r for r in data["runs"] if r["key"] == "a/nli")
    assert row["status"] == "unchecked" and "imperfective-nli-sample.json not found" in row["reason"]
    assert "unchecked" in _cli("study", "status", str(project / "out"))
    assert load(project / "out").runs == []  # never graded as done and current
    assert "unchecked, not known to be current" in _cli("report", str(project / "out" / "runs" / "a" / "nli"))


def test_a_study_s_transport_options_may_change_between_runs(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    shutil.copy(EXAMPLES / "imperfective-nli-sample.json", project / "nli.json")
    study = project / "study.yaml"
    text = ("models: [{spec: a, options: {timeout: 0.5, concurrency: 2%s}}]\nretries: 0\n"
            "suites: [{suite: imperfective, dataset: nli.json, axes: {strategy: zero-shot}, name: nli}]\n")
    study.write_text(text % "")
    run_study(load_study(study), project / "out", models=stand_in(study_backend))
    study.write_text(text.replace("timeout: 0.5, concurrency: 2", "timeout: 30, concurrency: 16") % "")
    said: list[str] = []
    run_study(load_study(study), project / "out", models=stand_in(study_backend), say=said.append)
    assert said == ["1 of 1 runs done"] and [r.status for r in grid(project / "out")] == ["done"]
    study.write_text(text % ", seed: 7")  # an option that changes answers is another configuration
    with pytest.raises(RunError, match=r"differs in: model_options"):
        run_study(load_study(study), project / "out", models=stand_in(study_backend))
