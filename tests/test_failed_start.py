"""A run that cannot start leaves nothing behind and says what is wrong in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_missing_hf_directory_is_named_and_leaves_no_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    missing = tmp_path / "no" / "such" / "model"
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"hf:{missing}", "--limit", "2",
         "--out", str(out)], capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"error: no such model directory: {missing}"
    assert not out.exists()


def test_model_failing_on_first_use_leaves_no_empty_run_directory(tmp_path: Path) -> None:
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"hf:{broken}", "--limit", "2",
         "--out", str(out), "--no-cache"], capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists()
