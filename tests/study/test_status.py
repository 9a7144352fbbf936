"""The grid: done, running (a process holds the run's lock), partial, failed and gave up, with
items left and an ETA; and a damaged study.json named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import stand_in, study_backend

from lingdiag.errors import RunError
from lingdiag.rundir import RunStore
from lingdiag.rundir import lock_held as held
from lingdiag.rundir.status import Status
from lingdiag.rundir.study import read_state
from lingdiag.study.execute import run_study
from lingdiag.study.schema import StudyFile
from lingdiag.study.status import grid, summary

PAIRS = Path(__file__).resolve().parents[2] / "examples" / "suites" / "agreement-pairs.yaml"


def test_grid_states_items_left_and_eta(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    study = StudyFile.model_validate({"models": [{"spec": "a"}, {"spec": "b"}, {"spec": "broken"}], "retries": 0,
                                      "suites": [{"suite": str(PAIRS), "name": "pairs"}], "base": tmp_path})
    out = tmp_path / "out"
    run_study(study, out, models=stand_in(study_backend))
    b = out / "runs" / "b" / "pairs"
    (b / "items.jsonl").write_text("".join((b / "items.jsonl").read_text().splitlines(keepends=True)[:6]))
    (b / "metrics.json").unlink()  # as a session killed mid-run leaves it: planned, not finished
    RunStore(b).write_meta(RunStore(b).read_meta().replaced(planned=16, finished=None))
    state = read_state(out)
    assert state is not None
    state.runs[1].state.status = Status.PLANNED  # as a killed session leaves it
    rows = grid(out, state)
    assert [(r.status, r.items_done, r.items_total) for r in rows] == [
        ("done", 16, 16), ("partial", 6, 16), ("gave up", 0, 16)]
    assert rows[2].reason == ("model broken did not load: RuntimeError: cannot load broken; gave up after 1 attempt "
                              "(retries: 0); raise retries: in the study file to try again")
    assert rows[1].eta_seconds is not None and rows[1].eta_seconds >= 0
    assert rows[2].eta_seconds is None  # given up: no study run works on it, so it has no time left
    assert summary(rows)["eta_seconds"] == rows[1].eta_seconds
    with RunStore(b).lock():
        assert held(b) and grid(out, state)[1].status == "running"
    assert not held(b)
    assert summary(rows)["items_left"] == 10 + 16


def test_a_damaged_study_json_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text("{not json")
    with pytest.raises(RunError, match="study.json: damaged .*move it aside"):
        read_state(tmp_path)
