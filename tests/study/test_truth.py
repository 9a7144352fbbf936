"""A study never reports stale or misattributed numbers: a run whose data or suite file changed is
stale (moved aside and run again, never reported), a deleted run is not done, a ``study.json``
entry cannot point outside the study, two models served under one name keep their study names and
their own notes, and one report draws runs of two versions of a suite file each with its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import stand_in, study_backend

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.report.tables import tables
from lingdiag.rundir import RunStore
from lingdiag.rundir.study import read_state
from lingdiag.study.execute import SUPERSEDED, run_study
from lingdiag.study.loaded import load
from lingdiag.study.schema import StudyFile
from lingdiag.study.sections.failures import failures_text
from lingdiag.study.status import grid, summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))


def _copy(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        shutil.copy(EXAMPLES / name, tmp_path / name)
        out.append(tmp_path / name)
    return out


def _nli_study(tmp_path: Path, data: Path, models: list[dict[str, Any]] | None = None) -> StudyFile:
    return StudyFile.model_validate({
        "models": models or [{"spec": "a"}], "retries": 0, "base": tmp_path,
        "suites": [{"suite": "imperfective", "dataset": str(data), "axes": {"strategy": "zero-shot"}, "name": "nli"}]})


def test_a_study_whose_data_changed_reports_no_old_numbers_and_runs_it_again(tmp_path: Path) -> None:
    (data,) = _copy(tmp_path, "imperfective-nli-sample.json")
    out = tmp_path / "out"
    run_study(_nli_study(tmp_path, data), out, models=stand_in(study_backend))
    assert [r.status for r in grid(out)] == ["done"]
    items = json.loads(data.read_text())
    items[0]["premise"] += " Nobody saw it."
    data.write_text(json.dumps(items))

    (row,) = grid(out)
    assert row.status == "stale" and row.reason == f"{data} changed since it ran (SHA-256)"
    study = load(out)
    assert study.runs == []  # the old records are never graded as the study's numbers
    assert f"- a × nli: stale, 8/8 items ({data} changed since it ran (SHA-256))" in failures_text(
        study.grid, study.runs, [])

    said: list[str] = []
    state = run_study(_nli_study(tmp_path, data), out, models=stand_in(study_backend), say=said.append)
    aside = out / SUPERSEDED / "a" / "nli" / "1"
    assert (aside / "items.jsonl").is_file()  # kept whole
    assert any(line.startswith("run a/nli: ") and str(aside) in line for line in said)
    assert [e.state.status for e in state.runs] == ["done"] and [r.status for r in grid(out)] == ["done"]
    (fresh,) = load(out).runs
    assert "Nobody saw it." in RunStore(fresh.run.path).load_records()[0].fields["premise"]


def test_a_study_whose_suite_file_changed_is_stale(tmp_path: Path) -> None:
    suite, _ = _copy(tmp_path, "agreement-pairs.yaml", "agreement-pairs.jsonl")
    study = StudyFile.model_validate({"models": [{"spec": "a"}], "retries": 0, "base": tmp_path,
                                      "suites": [{"suite": str(suite), "name": "pairs"}]})
    out = tmp_path / "out"
    run_study(study, out, models=stand_in(study_backend))
    suite.write_text(suite.read_text().replace("Minimal pairs (good sentence likelier)", "Edited caption"))
    (row,) = grid(out)
    assert row.status == "stale" and row.reason == f"suite file {suite} changed since it ran (SHA-256)"
    assert load(out).runs == []


def test_a_deleted_run_is_not_done(tmp_path: Path) -> None:
    (data,) = _copy(tmp_path, "imperfective-nli-sample.json")
    out = tmp_path / "out"
    run_study(_nli_study(tmp_path, data, [{"spec": "a"}, {"spec": "b"}]), out, models=stand_in(study_backend))
    shutil.rmtree(out / "runs" / "b")
    rows = grid(out)
    assert [(r.key, r.status, r.items_done) for r in rows] == [("a/nli", "done", 8), ("b/nli", "planned", 0)]
    assert summary(rows)["done"] == 1
    study = load(out)
    assert [s.label for s in study.runs] == ["a"] and study.unreadable == []
    assert "- b × nli: planned, 0/8 items" in failures_text(study.grid, study.runs, study.unreadable)


@pytest.mark.parametrize("key", ["../../other/r", "/etc/x", "a/../b", "a/b/c", "a", "./b"])
def test_a_study_json_entry_cannot_point_outside_the_study(tmp_path: Path, key: str) -> None:
    (data,) = _copy(tmp_path, "imperfective-nli-sample.json")
    out = tmp_path / "out"
    run_study(_nli_study(tmp_path, data), out, models=stand_in(study_backend))
    state = json.loads((out / "study.json").read_text())
    state["runs"][0]["key"] = key
    (out / "study.json").write_text(json.dumps(state))
    with pytest.raises(RunError, match=r"study\.json.*runs.*key.*could name a directory outside the study"):
        read_state(out)


def test_two_models_served_under_one_name_keep_their_study_names_and_notes(tmp_path: Path) -> None:
    (data,) = _copy(tmp_path, "imperfective-nli-sample.json")

    class Endpoint(MockBackend):
        """A server at its own URL that calls its model "m", as two endpoints (or quantisations) do."""

        def __init__(self, url: str, label: str) -> None:
            super().__init__(lambda r: label, name="m")
            self.url = url

        @property
        def identity(self) -> dict[str, str]:
            return {**super().identity, "base_url": self.url}

    def one_name(config: RunConfig) -> MockBackend:
        return Endpoint(f"http://127.0.0.1/{config.model}", "True" if config.model == "x" else "False")

    out = tmp_path / "out"
    run_study(_nli_study(tmp_path, data, [{"spec": "x", "name": "A"}, {"spec": "y", "name": "B"}]), out,
              models=stand_in(one_name))
    study = load(out)
    runs = study.runs
    assert [s.run.model for s in runs] == ["A", "B"] and [r.model for s in runs for r in s.run.rows] == ["A", "B"]
    notes = failures_text(study.grid, runs, study.unreadable)
    assert "- A × nli, zero-shot: not interpretable (one label (True) for every item)" in notes
    assert "- B × nli, zero-shot: not interpretable (one label (False) for every item)" in notes
    text = tables([s.run for s in runs])
    assert "| zero-shot | A |" in text and "| zero-shot | B |" in text


def test_one_report_draws_two_versions_of_a_suite_file_each_with_its_own(tmp_path: Path) -> None:
    suite, _ = _copy(tmp_path, "agreement-pairs.yaml", "agreement-pairs.jsonl")
    backend = MockBackend(loglik_fn=lambda r: -float(len(r.continuation)))
    evaluate(RunConfig(suite=str(suite), model="mock", dataset="builtin"), backend, tmp_path / "v1")
    suite.write_text(suite.read_text().replace("Minimal pairs (good sentence likelier)", "Second version caption")
                     .replace("header: Acc}", "header: Accuracy v2}"))
    evaluate(RunConfig(suite=str(suite), model="mock", dataset="builtin"), backend, tmp_path / "v2")
    runs = load_runs([tmp_path / "v1", tmp_path / "v2"])
    assert runs[0].suite is not runs[1].suite and runs[0].suite_title != runs[1].suite_title
    text = tables(runs)
    assert "Minimal pairs (good sentence likelier)" in text and "Second version caption" in text
    assert "| Acc |" in text and "| Accuracy v2 |" in text
