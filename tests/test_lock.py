"""One process per run directory: a second ``lingdiag run`` on the same ``--out`` is refused
with the holder's pid, and a killed holder releases it (real processes, real HTTP server)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[1] / "src")


def start(url: str, out: Path, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{url}",
         "--strategy", "zero-shot", "--limit", "4", "--out", str(out), "--no-cache",
         "--model-option", "concurrency=1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cache), "PYTHONPATH": SRC})


def wait_for_lock(out: Path, pid: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / ".lock").exists() and (out / ".lock").read_text().strip() == str(pid):
            return
        time.sleep(0.05)
    raise AssertionError("the first run never took the lock")


def test_second_process_on_one_out_is_refused(fake_api: Any, tmp_path: Path) -> None:
    fake_api.delay = 2.0  # four answers one after another: the first run holds the directory ~8 s, time enough
    # for a second process to start on a loaded machine
    out = tmp_path / "run"
    first = start(fake_api.url, out, tmp_path / "cache")
    wait_for_lock(out, first.pid)
    second = start(fake_api.url, out, tmp_path / "cache")
    _, err = second.communicate(timeout=120)
    assert second.returncode == 2 and "Traceback" not in err
    assert f"run directory {out} is in use by pid {first.pid}" in err
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(records) == len({r["item_id"] for r in records}) == 4


def test_killed_holder_releases_the_directory(fake_api: Any, tmp_path: Path) -> None:
    fake_api.delay = 5.0
    out = tmp_path / "run"
    first = start(fake_api.url, out, tmp_path / "cache")
    wait_for_lock(out, first.pid)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    fake_api.delay = 0.0
    again = start(fake_api.url, out, tmp_path / "cache")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
