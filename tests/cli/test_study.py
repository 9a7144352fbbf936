"""``lingdiag study run|status|report`` as real processes on tiny local checkpoints: ``kill -9``
in the middle of a study, and the same command resumes with no finished run redone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import SRC, lingdiag, tiny_checkpoints

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _study_file(tmp_path: Path) -> Path:
    tiny_checkpoints(tmp_path / "ckpt")
    path = tmp_path / "study.yaml"
    path.write_text(f"""
name: killed
models:
  - name: tiny
    family: tiny-llama
    checkpoints:
      - {{path: ckpt/step1, step: 1}}
      - {{path: ckpt/step2, step: 2}}
      - {{path: ckpt/step3, step: 3}}
suites:
  - {{suite: {EXAMPLES / 'agreement-pairs.yaml'}, name: pairs}}
  - suite: imperfective
    name: nli
    dataset: {EXAMPLES / 'imperfective-nli-sample.json'}
    axes: {{strategy: zero-shot}}
    options: {{max_new_tokens: 8}}
    limit: 8
""")
    return path


def _done(out: Path) -> dict[str, int]:
    """Finished run → its ``items.jsonl``'s modification time."""
    try:
        state = json.loads((out / "study.json").read_text())
    except (OSError, ValueError):
        return {}
    return {r["key"]: (out / "runs" / r["key"] / "items.jsonl").stat().st_mtime_ns
            for r in state["runs"] if r["state"]["status"] == "done"}


@pytest.mark.slow
def test_kill_9_then_the_same_command_resumes(tmp_path: Path) -> None:
    study, out = _study_file(tmp_path), tmp_path / "out"
    env = {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC,
           "HF_HUB_OFFLINE": "1"}
    child = subprocess.Popen([sys.executable, "-m", "lingdiag", "study", "run", str(study), "--out", str(out)],
                             cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not _done(out) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    finished = _done(out)
    assert finished and len(finished) < 6, f"the kill came at no run's middle: {finished}"
    again = lingdiag(tmp_path, "study", "run", str(study), "--out", str(out), env={"HF_HUB_OFFLINE": "1"})
    assert again.returncode == 0, again.stderr
    now = _done(out)
    assert len(now) == 6
    assert {k: now[k] for k in finished} == finished  # no finished run was redone
    status = lingdiag(tmp_path, "study", "status", str(out), "--json")
    summary = json.loads(status.stdout)["summary"]
    assert (summary["done"], summary["items_left"]) == (6, 0)
    report = lingdiag(tmp_path, "study", "report", str(out), "--html", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    assert "tiny: nli, zero-shot" in (tmp_path / "r.html").read_text()


def test_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("models: [{spec: a, famly: x}]\nsuites: [{suite: imperfective}]\n")
    bad = lingdiag(tmp_path, "study", "run", "s.yaml", "--out", "out")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "models.0.famly: unknown key" in bad.stderr
    missing = lingdiag(tmp_path, "study", "status", "nowhere")
    assert missing.returncode == 2 and "not a study directory" in missing.stderr
    nothing = lingdiag(tmp_path, "study", "report", "nowhere")
    assert nothing.returncode == 2 and "not a study directory" in nothing.stderr


def test_study_report_without_files_prints_its_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``study report DIR`` with neither --html nor --tables: the findings and the runs per state on the
    terminal (plain text: a hostile model name prints no escape sequence), and where the whole report goes."""
    from helpers import stand_in, study_backend

    from lingdiag.study.execute import run_study
    from lingdiag.study.schema import StudyFile

    study = StudyFile.model_validate({
        "name": "printed", "base": tmp_path, "retries": 0,
        "models": [{"spec": "a"}, {"spec": "broken-x"}, {"name": "t", "checkpoints": [
            {"spec": "t1", "step": 1}, {"spec": "t2", "step": 2}]}, {"spec": "b", "name": "b\x1b[31m"}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}]})
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    run_study(study, tmp_path / "out", models=stand_in(study_backend))
    done = lingdiag(tmp_path, "study", "report", "out")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "printed: 4 done, 1 gave up"
    assert "- 4 of 5 runs done." in lines and any(line.startswith("- Learning curve of t on pairs") for line in lines)
    assert lines[-1].startswith("The whole report: --html FILE") and "\x1b" not in done.stdout
    assert not (tmp_path / "out" / "study.md").exists()
    status = lingdiag(tmp_path, "study", "status", "out").stdout.splitlines()
    gave_up = next(line for line in status if line.startswith("gave up"))
    assert "eta       –  broken-x × pairs" in gave_up  # no time left for a run no study run works on
