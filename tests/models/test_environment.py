"""The tested lock and `lingdiag env`: installed versions against the lock, and a venv without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.environment import LockStatus, Pin, lock, lock_status, parse_lock, pins, runtime_packages
from lingdiag.models.mock import MockBackend

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "src" / "lingdiag" / "constraints.txt"
MOCK_RUN = RunConfig.model_validate({"suite": "imperfective", "model": "mock", "dataset": "builtin", "limit": 4,
                                     "axes": {"strategy": ["zero-shot"]}})


@pytest.mark.lock
@pytest.mark.slow
def test_every_locked_package_is_installed_at_its_locked_version() -> None:
    # make test installs every extra from the lock; a drifted or missing package fails CI here.
    # Slow: the llama.cpp server and its web stack (fastapi, uvicorn, ...) come only with
    # `make test`, so `make test-fast` on a fresh clone would find them missing.
    wrong = [f"{p.name}: installed {p.installed}, locked {p.locked}" for p in pins() if not p.matches]
    assert not wrong, "the environment is not the lock's:\n" + "\n".join(wrong)


@pytest.mark.lock
def test_a_run_records_that_its_versions_match_the_lock(tmp_path: Path) -> None:
    evaluate(MOCK_RUN, MockBackend(lambda r: "True"), tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["lock"] == {"matches": True, "differs": {}, "unlocked": []}


def test_the_lock_pins_the_cpu_torch_and_the_current_transformers() -> None:
    pinned = lock()
    assert pinned["torch"].endswith("+cpu")
    assert pinned["transformers"] == "5.24.0"
    assert not [n for n in pinned if n.startswith("nvidia-")], "a CUDA wheel's dependencies in the lock"


def test_parse_lock_reads_pins_and_skips_comments_and_options() -> None:
    text = ["# header", "-c other.txt", "Foo_Bar==1.2.0   # via x", "baz==2.0+cpu", "", "qux>=1"]
    assert parse_lock(text) == {"foo-bar": "1.2.0", "baz": "2.0+cpu"}


def test_a_drifted_lock_is_reported_package_by_package() -> None:
    installed = {p.name: p.installed for p in pins(runtime_packages())}
    drifted = {**lock(), "numpy": "0.0.1"}
    status = lock_status(drifted)
    assert not status.matches
    assert [p.name for p in status.differs] == ["numpy"]
    assert status.recorded()["differs"] == {"numpy": {"installed": installed["numpy"], "locked": "0.0.1"}}
    line = status.line()
    assert line is not None and "\n" not in line and f"numpy {installed['numpy']} (lock 0.0.1)" in line


def test_a_runtime_package_missing_from_the_lock_is_not_a_match() -> None:
    unlocked = {n: v for n, v in lock().items() if n != "scipy"}
    status = lock_status(unlocked)
    assert status.unlocked == ("scipy",) and not status.matches
    assert "scipy (not in the lock)" in (status.line() or "")


def test_pin_compares_versions_not_text() -> None:
    assert Pin("x", "1.0", "1.0.0").matches
    assert not Pin("x", "1.0", None).matches
    assert LockStatus(differs=(), unlocked=()).line() is None


def test_env_lists_the_lock_torch_and_threads() -> None:
    proc = subprocess.run([sys.executable, "-m", "lingdiag", "env", "--json"], capture_output=True, text=True,
                          check=True)
    data = json.loads(proc.stdout)
    assert data["torch"]["version"].startswith("2.13.0") and data["torch"]["devices"][0] == "cpu"
    assert data["cpus"] == len(os.sched_getaffinity(0))
    assert {p["name"] for p in data["packages"]} >= {"transformers", "torch", "numpy"}


@pytest.mark.slow
def test_env_and_run_without_torch_in_a_fresh_venv(tmp_path: Path) -> None:
    # A user who installed lingdiag without the hf extra: a real venv with the core packages only.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(LOCK)]
    subprocess.run([*pip, str(REPO)], check=True, capture_output=True)
    subprocess.run([*pip[:-2], "--no-deps", "pyyaml==6.0.3"], check=True, capture_output=True)
    lingdiag = str(venv / "bin" / "lingdiag")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([lingdiag, "env"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    missing = [line for line in proc.stdout.splitlines() if line.startswith("torch is not installed")]
    assert len(missing) == 1 and "pip install torch==2.13.0" in missing[0]
    assert "pyyaml 6.0.3 (lock 6.0.4)" in proc.stdout
    # The CLI says so in one line before it loads a model (and here refuses it in one line).
    run = subprocess.run([lingdiag, "run", "imperfective", "--model", "smollm2-135m", "--dataset", "builtin",
                          "--limit", "2", "--strategy", "zero-shot", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    notes = [line for line in run.stderr.splitlines() if "tested lock" in line]
    assert len(notes) == 1 and "pyyaml 6.0.3 (lock 6.0.4)" in notes[0]
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    # meta.json records it.
    script = ("import sys; from pathlib import Path; from lingdiag.config import RunConfig; "
              "from lingdiag.models.mock import MockBackend; from lingdiag.engine.run import evaluate; "
              f"evaluate(RunConfig.model_validate_json({MOCK_RUN.model_dump_json()!r}), "
              "MockBackend(lambda r: 'True'), Path(sys.argv[1]))")
    subprocess.run([str(venv / "bin" / "python"), "-c", script, str(tmp_path / "mock")], check=True, env=env)
    meta = json.loads((tmp_path / "mock" / "meta.json").read_text())
    assert meta["lock"]["differs"] == {"pyyaml": {"installed": "6.0.3", "locked": "6.0.4"}}
