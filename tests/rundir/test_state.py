"""A run directory's state from its files alone: finished, current against its inputs, how far,
running; probed the way runs go wrong (kill -9 mid-write, a lock held by another process, data,
suite file or records edited after the run, a deleted or foreign ``meta.json``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import SRC, fixture_runs

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate, plan
from lingdiag.models.mock import MockBackend
from lingdiag.rundir import Inputs, Phase, RunStore, lock_held, run_state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"
FIXTURES = fixture_runs("rundir-3789a70")


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "nli.json"
    shutil.copy(EXAMPLES / "imperfective-nli-sample.json", data)
    return data


def _config(data: Path, limit: int = 4) -> RunConfig:
    return RunConfig(suite="imperfective", model="mock", dataset=str(data), axes={"strategy": ["zero-shot"]},
                     limit=limit)


def _run(tmp_path: Path, data: Path, limit: int = 4) -> Path:
    out = tmp_path / "run"
    evaluate(_config(data, limit), MockBackend(lambda r: "True"), out)
    return out


def test_a_finished_run_is_finished_current_and_complete(tmp_path: Path) -> None:
    run = _run(tmp_path, _data(tmp_path))
    state = run_state(run)
    assert (state.phase, state.status, state.planned, state.recorded, state.failed) == (Phase.FINISHED, "finished",
                                                                                        4, 4, 0)
    assert state.complete and state.current and state.line is None
    meta = json.loads((run / "meta.json").read_text())
    assert "planned" not in meta and meta["finished"]["records"] == 4  # finish wrote its end, last


def test_a_data_file_edited_after_the_run_makes_it_stale_everywhere(tmp_path: Path) -> None:
    data = _data(tmp_path)
    run = _run(tmp_path, data)
    items = json.loads(data.read_text())
    items[0]["premise"] += " Nobody saw it."  # one item's text: what the model was asked is not this
    data.write_text(json.dumps(items))
    state = run_state(run)
    assert state.status == "stale" and not state.complete and state.finished
    assert state.line == f"stale, not current: {data} changed since it ran (SHA-256)"
    config = _config(data)
    planned = run_state(run, plan(config).inputs(config))  # what a study or resume compares: the same answer
    assert [c.kind for c in planned.changes] == ["data"]


def test_a_suite_file_edited_after_the_run_makes_it_stale(tmp_path: Path) -> None:
    for name in ("agreement-pairs.yaml", "agreement-pairs.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    suite = tmp_path / "agreement-pairs.yaml"
    config = RunConfig(suite=str(suite), model="mock", dataset="builtin")
    evaluate(config, MockBackend(loglik_fn=lambda r: -float(len(r.continuation))), tmp_path / "run")
    assert run_state(tmp_path / "run").current
    suite.write_text(suite.read_text().replace("Minimal pairs (good sentence likelier)", "Another caption"))
    state = run_state(tmp_path / "run")
    assert [c.line for c in state.changes] == [f"suite file {suite} changed since it ran (SHA-256)"]
    suite.unlink()  # gone: cannot be checked, so it is named, not taken as changed
    gone = run_state(tmp_path / "run")
    assert gone.current and gone.unchecked == (str(suite),)


def test_records_edited_after_the_run_finished_are_not_its_numbers(tmp_path: Path) -> None:
    run = _run(tmp_path, _data(tmp_path))
    items = run / "items.jsonl"
    text = items.read_text()
    items.write_text(text.replace('"correct": false', '"correct": true ', 1))  # a hand-edited grade
    assert len(items.read_bytes()) == len(text.encode())  # the same size: only the SHA-256 tells
    state = run_state(run)  # no size shortcut: the digest, trusted only while the file is the one hashed
    assert state.status == "stale" and [c.kind for c in state.changes] == ["records"]
    items.write_text(text.splitlines(keepends=True)[0])  # truncated: the size tells at once
    assert "items.jsonl changed since the run finished (4 records" in (run_state(run).line or "")


SLOW_RUN = """
import sys, time
from pathlib import Path
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend

def answer(request):
    time.sleep(0.3)
    return "True"

config = RunConfig(suite="imperfective", model="mock", dataset=sys.argv[1], axes={"strategy": ["zero-shot"]},
                   limit=12, chunk_items=1)
evaluate(config, MockBackend(answer), Path(sys.argv[2]))
"""


def test_kill_9_mid_write_leaves_a_stopped_run_that_resumes_to_finished(tmp_path: Path) -> None:
    data, run = _data(tmp_path), tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": SRC}
    with subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(data), str(run)], env=env) as child:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            items = run / "items.jsonl"
            if items.exists() and items.read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        writing = run_state(run)
        assert writing.phase is Phase.RUNNING and writing.planned == 8 and lock_held(run)  # the sample's 8 items
        child.send_signal(signal.SIGKILL)
        child.wait()
    state = run_state(run)
    assert state.phase is Phase.STOPPED and not lock_held(run)  # the kernel dropped the flock with the process
    assert 2 <= state.recorded < 8 and state.planned == 8
    assert state.line == f"run not finished (stopped): {state.recorded} of 8 items"
    config = RunConfig(suite="imperfective", model="mock", dataset=str(data), axes={"strategy": ["zero-shot"]},
                       limit=12, chunk_items=1)
    evaluate(config, MockBackend(lambda r: "True"), run)
    assert run_state(run).complete


def test_resume_refuses_what_the_state_calls_stale(tmp_path: Path) -> None:
    from lingdiag.errors import RunError

    data = _data(tmp_path)
    run = _run(tmp_path, data)
    data.write_text(data.read_text().replace("gazebo", "shed", 1))
    with pytest.raises(RunError, match="was run on other data: .*nli.json changed since"):
        evaluate(_config(data), MockBackend(lambda r: "True"), run)
    with pytest.raises(RunError, match=r"holds a run with a different configuration \(differs in: limit\)"):
        evaluate(_config(data, limit=5), MockBackend(lambda r: "True"), run)


def test_a_missing_damaged_or_newer_meta_json_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path, _data(tmp_path))
    meta = json.loads((run / "meta.json").read_text())
    (run / "meta.json").write_text(json.dumps({**meta, "schema_version": 2}))
    newer = run_state(run)
    assert newer.phase is Phase.UNREADABLE
    assert newer.problem == (f"{run / 'meta.json'}, field 'schema_version': 2 is newer than this lingdiag reads (1); "
                             "read the run with the lingdiag that wrote it, or upgrade")
    (run / "meta.json").write_text("{")
    assert run_state(run).phase is Phase.UNREADABLE and "meta.json" in (run_state(run).problem or "")
    (run / "meta.json").unlink()
    gone = run_state(run)
    assert (gone.phase, gone.complete, gone.status) == (Phase.ABSENT, False, "absent")
    assert run_state(tmp_path / "never").phase is Phase.ABSENT


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_runs_written_before_the_finished_part_are_finished(name: str) -> None:
    state = run_state(FIXTURES / name)
    assert state.finished and state.planned == state.recorded + state.failed and not state.changes, state


def test_a_second_process_holding_the_lock_is_running_and_asking_takes_no_lock(tmp_path: Path) -> None:
    run = _run(tmp_path, _data(tmp_path))
    hold = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)")
    with subprocess.Popen([sys.executable, "-c", hold, str(run / ".lock")], stdout=subprocess.PIPE,
                          text=True) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "held"
            assert run_state(run).phase is Phase.RUNNING
            # Reading /proc/locks, the check holds nothing: the table lists the child's lock alone.
            locks = [line for line in Path("/proc/locks").read_text().splitlines()
                     if line.split()[-3].endswith(f":{(run / '.lock').stat().st_ino}")]
            assert len(locks) == 1 and f" {child.pid} " in f" {locks[0]} "
        finally:
            child.kill()
    assert run_state(run).phase is Phase.FINISHED


def test_inputs_given_by_a_caller_are_compared_as_given(tmp_path: Path) -> None:
    data = _data(tmp_path)
    run = _run(tmp_path, data)
    recorded = RunStore(run).read_meta()
    same = Inputs(dict(recorded.config), dict(recorded.checksums or {}), "")
    assert run_state(run, same).complete
    other = Inputs({**recorded.config, "seed": 1}, dict(recorded.checksums or {}), "")
    assert [c.line for c in run_state(run, other).changes] == ["its configuration differs in: seed"]
    batch = Inputs({**recorded.config, "batch_tokens": 64}, dict(recorded.checksums or {}), "")
    assert run_state(run, batch).complete  # batching only: a resumable change
