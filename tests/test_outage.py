"""A total outage must not look like a result: failed items are unanswered, the table says so and
the run exits with its own code (a real HTTP server on 127.0.0.1 that fails every request)."""

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from helpers import serve


@pytest.fixture()
def broken_server() -> Iterator[str]:
    with serve(lambda path, request: (500, {"error": {"message": "injected outage"}})) as url:
        yield url


def test_every_request_failing_exits_3_and_scores_nothing(broken_server, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{broken_server}",
         "--strategy", "zero-shot", "--limit", "8", "--out", str(out), "--no-cache",
         "--model-option", "max_retries=0"],
        capture_output=True, text=True, env={"OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"}, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert "8 of 8 items failed" in proc.stderr and "Traceback" not in proc.stderr
    assert "**Failed items**" in proc.stdout and "zero-shot: 8 of 8" in proc.stdout
    metrics = json.loads((out / "metrics.json").read_text())["zero-shot"]
    assert metrics["n_errors"] == 8 and metrics["n"] == 8
    # Nothing was answered, so nothing is a rate: no 0.00 TBR_C passing for the best possible value.
    assert metrics["tbr_C"] != 0.0
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert all(r["correct"] is None and r["error"] for r in records)
