"""Running a study: one model load for all its suites, a finished run never redone (its model
never loaded), a partial run resumed, a failed one retried a bounded number of times with its
reason kept, a changed plan refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import stand_in, study_backend

from lingdiag.config import RunConfig
from lingdiag.errors import RunError
from lingdiag.rundir import RunStore
from lingdiag.rundir.status import Status
from lingdiag.rundir.study import read_state
from lingdiag.study.execute import run_study
from lingdiag.study.schema import StudyFile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _study(tmp_path: Path, models: list[dict[str, Any]], retries: int = 1) -> StudyFile:
    return StudyFile.model_validate({
        "models": models, "retries": retries, "base": tmp_path,
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"},
                   {"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                    "axes": {"strategy": "zero-shot"}, "limit": 6, "name": "nli"}]})


class Loads:
    """``load=`` that counts loads and the requests each model served."""

    def __init__(self) -> None:
        self.loaded: list[str] = []
        self.backends: list[Any] = []

    def __call__(self, config: RunConfig) -> Any:
        self.loaded.append(config.model)
        backend = study_backend(config)
        self.backends.append(backend)
        return backend


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))  # a cached answer would hide a redone run


def test_one_load_per_model_and_nothing_redone(tmp_path: Path) -> None:
    study, out, loads = _study(tmp_path, [{"spec": "a"}, {"spec": "b"}]), tmp_path / "out", Loads()
    state = run_study(study, out, models=stand_in(loads))
    assert loads.loaded == ["a", "b"]
    assert [e.state.status for e in state.runs] == ["done"] * 4
    assert [e.state.items_done for e in state.runs] == [16, 6, 16, 6]
    before = {e.key: (e.directory(out) / "items.jsonl").stat().st_mtime_ns for e in state.runs}
    again = Loads()
    run_study(study, out, models=stand_in(again))
    assert again.loaded == []  # every run finished: no model is even loaded
    assert {e.key: (e.directory(out) / "items.jsonl").stat().st_mtime_ns for e in state.runs} == before
    assert read_state(out) is not None


def test_a_partial_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    study, out = _study(tmp_path, [{"spec": "a"}]), tmp_path / "out"
    run_study(study, out, models=stand_in(Loads()))
    run_dir = out / "runs" / "a" / "pairs"
    finished = (run_dir / "items.jsonl").read_text()
    (run_dir / "items.jsonl").write_text("".join(finished.splitlines(keepends=True)[:10]))
    (run_dir / "metrics.json").unlink()
    loads = Loads()
    state = run_study(study, out, models=stand_in(loads))
    assert loads.loaded == ["a"]
    assert state.runs[0].state.status == Status.DONE and len(RunStore(run_dir).load_records()) == 16
    assert (run_dir / "items.jsonl").read_text() == finished  # the resumed run's records, byte for byte


def test_a_failed_model_is_retried_a_bounded_number_of_times(tmp_path: Path) -> None:
    study, out = _study(tmp_path, [{"spec": "broken-x"}, {"spec": "a"}], retries=1), tmp_path / "out"
    tries = []
    for _ in range(3):
        loads = Loads()
        state = run_study(study, out, models=stand_in(loads))
        tries.append(loads.loaded)
    assert tries == [["broken-x", "a"], ["broken-x"], []]  # two failed attempts (retries 1), then given up
    broken = state.runs[0].state
    assert (broken.status, broken.attempts) == ("failed", 2)
    assert broken.reason == ("model broken-x did not load: RuntimeError: cannot load broken-x; gave up after 2 "
                             "attempts (retries: 1); raise retries: in the study file to try again")
    assert [e.state.status for e in state.runs[2:]] == ["done", "done"]


def test_a_changed_plan_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_study(_study(tmp_path, [{"spec": "a"}]), out, models=stand_in(Loads()))
    changed = StudyFile.model_validate({**_study(tmp_path, [{"spec": "a"}]).model_dump(), "seed": 7,
                                        "base": tmp_path})
    with pytest.raises(RunError, match="run 'a/pairs' of the study directory was planned with another "
                                       "configuration \\(differs in: seed\\)"):
        run_study(changed, out, models=stand_in(Loads()))


@pytest.mark.slow
def test_runs_as_jobs_of_the_submit_executors(tmp_path: Path) -> None:
    from helpers import tiny_checkpoints

    tiny_checkpoints(tmp_path / "ckpt", steps=(1,))
    study = StudyFile.model_validate({
        "models": [{"name": "tiny", "checkpoints": [{"path": "ckpt/step1", "step": 1}]}], "base": tmp_path,
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}],
        "where": {"executor": "local", "time_min": 10}})
    notes: list[str] = []
    state = run_study(study, tmp_path / "out", say=notes.append)
    assert state.runs[0].state.status == Status.DONE, state.runs[0].state.reason
    assert any(n.startswith("run tiny_step1/pairs: job ") for n in notes)
    assert list((tmp_path / "out" / "jobs").iterdir())  # submitit's job logs
    notes.clear()
    run_study(study, tmp_path / "out", say=notes.append)
    assert not any("job" in n for n in notes)  # finished: nothing submitted again


def test_credentials_reach_the_model_and_never_study_json(tmp_path: Path) -> None:
    spec = "openai:m@http://127.0.0.1:9/v1?api_key=SECRET"
    loads = Loads()
    run_study(_study(tmp_path, [{"spec": spec}]), tmp_path / "out", models=stand_in(loads))
    assert loads.loaded == [spec]
    assert "SECRET" not in (tmp_path / "out" / "study.json").read_text()
    assert not [p for p in (tmp_path / "out").rglob("*") if "SECRET" in p.name]


def test_a_second_study_process_on_one_directory_is_refused_naming_the_holder(tmp_path: Path) -> None:
    """Two ``study run`` on one directory at once: the second is refused before it plans or writes anything."""
    import subprocess
    import sys
    import time

    out = tmp_path / "study"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from lingdiag.rundir import RunStore\n"
                               f"with RunStore({str(out)!r}).lock():\n"
                               "    print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(RunError, match=rf"in use by pid {holder.pid}"):
            run_study(_study(tmp_path, [{"spec": "a"}]), out, models=stand_in(study_backend))
        assert time.monotonic() - started < 10
        assert not (out / "study.json").exists() and not (out / "runs").exists()
    finally:
        holder.kill()
        holder.communicate()


SLOW_STUDY = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from helpers import stand_in, study_backend
from lingdiag.study import execute
from lingdiag.study.schema import load_study

execute.FLUSH_SECONDS = 0.2

def slow(config):
    backend = study_backend(config)
    score = backend.loglikelihood
    def loglikelihood(requests):
        time.sleep(0.15 * len(requests))
        return score(requests)
    backend.loglikelihood = loglikelihood
    return backend

execute.run_study(load_study(Path({study!r})), Path({out!r}), models=stand_in(slow))
"""


def test_a_run_in_progress_has_an_eta_and_a_killed_attempt_keeps_its_seconds(tmp_path: Path) -> None:
    """``study status`` during the first run gives an ETA (the run adds its seconds and items to study.json
    as it goes); a ``kill -9`` mid-run leaves the seconds spent, and the next attempt adds to them."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from lingdiag.study.schema import load_study
    from lingdiag.study.status import grid, summary

    out, study = tmp_path / "out", tmp_path / "study.yaml"
    study.write_text(f"models: [{{spec: a}}]\nrun: {{chunk_items: 2}}\n"
                     f"suites: [{{suite: '{EXAMPLES / 'agreement-pairs.yaml'}', name: pairs}}]\n")
    script = tmp_path / "slow.py"
    script.write_text(SLOW_STUDY.format(tests=str(Path(__file__).resolve().parents[1]), study=str(study),
                                        out=str(out)))
    child = subprocess.Popen([sys.executable, str(script)], env={**os.environ, "LINGDIAG_CACHE": str(tmp_path / "c")})
    try:
        deadline = time.monotonic() + 120
        rows: list[Any] = []
        while time.monotonic() < deadline and child.poll() is None:
            state = read_state(out, missing_ok=True)
            if state is not None and state.runs[0].state.seconds > 0:
                rows = grid(out)
                if rows[0].status == "running" and rows[0].eta_seconds is not None:
                    break
            time.sleep(0.1)
        assert rows and rows[0].status == "running" and rows[0].items_done < rows[0].items_total, rows
        assert rows[0].eta_seconds is not None and summary(rows)["eta_seconds"] is not None  # not "eta ?"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    killed = read_state(out)
    assert killed is not None and killed.runs[0].state.seconds > 0  # the killed attempt's time is kept
    spent = killed.runs[0].state.seconds
    run_study(load_study(study), out, models=stand_in(study_backend))
    again = read_state(out)
    assert again is not None and again.runs[0].state.status == Status.DONE and again.runs[0].state.seconds > spent
