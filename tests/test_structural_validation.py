"""Structural validation before any model loads (issue 35): each a one-line error, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path("src").resolve())})


@pytest.mark.parametrize("args", [["minimal-pairs", "--scoring-policy", "lingdiag,lingdiag"],
                                  ["imperfective", "--strategy", "zero-shot,zero-shot"]])
def test_a_value_named_twice_on_an_axis_is_refused(tmp_path: Path, args: list[str]) -> None:
    proc = cli("run", *args, "--model", "mock", "--limit", "2", "--out", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert "more than once" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()
