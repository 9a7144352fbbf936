"""metrics.json and every --json output are strict JSON: a rate over no answered item is null,
never a bare NaN (real HTTP server on 127.0.0.1 whose answers all fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[1] / "src")


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_metrics_and_json_outputs_hold_no_nan(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = None  # every item fails: no rate has a denominator
    out = tmp_path / "run"
    env = {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{fake_api.url}",
         "--strategy", "zero-shot", "--limit", "2", "--out", str(out), "--json", "--model-option", "max_retries=0"],
        capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 3, proc.stderr
    printed = strict(proc.stdout)
    assert printed["zero-shot"]["tbr_C"] is None
    assert strict((out / "metrics.json").read_text())["zero-shot"]["tbr_C"] is None
    report = subprocess.run([sys.executable, "-m", "lingdiag", "report", str(out), "--json"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert report.returncode == 0, report.stderr
    strict(report.stdout)
