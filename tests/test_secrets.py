"""Keys never reach the run directory: one echoed by a server inside an answer is redacted
from items.jsonl and the cache, one in a URL query from meta.json and the directory name
(real HTTP server on 127.0.0.1, real processes)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag as run_lingdiag

KEY = "sk-live-4f9a2b7c1d8e3f60"
QUERY_SECRET = "q5ecret7777"


def lingdiag(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_lingdiag(cwd, *args, env={"MY_KEY": KEY})


def everything_written(root: Path) -> str:
    """Every path and file content lingdiag wrote under ``root``, cache entries read through SQLite."""
    parts = []
    for path in sorted([*root.glob("runs/**/*"), *root.glob("cache/*")]):
        parts.append(str(path))
        if path.name == "responses.sqlite":
            parts += [v for (v,) in sqlite3.connect(path).execute("SELECT value FROM responses")]
        elif path.is_file():
            parts.append(path.read_bytes().decode(errors="replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("query", ["api_key", "key", "token"])
def test_keys_never_reach_the_run_directory(fake_api: Any, tmp_path: Path, query: str) -> None:
    fake_api.content = f"Here is what I was sent: Bearer {KEY}. True"
    proc = lingdiag(tmp_path, "run", "imperfective", "--model", f"openai:m@{fake_api.url}?{query}={QUERY_SECRET}",
                    "--strategy", "zero-shot", "--limit", "2", "--model-option", "api_key_env=MY_KEY")
    assert proc.returncode == 0, proc.stderr
    written = everything_written(tmp_path)
    assert "responses.sqlite" in written and "items.jsonl" in written and "meta.json" in written
    assert KEY not in written and QUERY_SECRET not in written
    assert KEY not in proc.stdout + proc.stderr and QUERY_SECRET not in proc.stdout + proc.stderr
    # The same command resumes its run (the recorded configuration is compared redacted).
    again = lingdiag(tmp_path, "run", "imperfective", "--model", f"openai:m@{fake_api.url}?{query}={QUERY_SECRET}",
                     "--strategy", "zero-shot", "--limit", "2", "--model-option", "api_key_env=MY_KEY")
    assert again.returncode == 0, again.stderr


def test_credentials_in_the_url_are_refused_without_echo(fake_api: Any, tmp_path: Path) -> None:
    spec = fake_api.url.replace("http://", f"http://user:{QUERY_SECRET}@")
    proc = lingdiag(tmp_path, "run", "imperfective", "--model", f"openai:m@{spec}", "--limit", "2")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "put no credentials" in proc.stderr
    assert QUERY_SECRET not in everything_written(tmp_path) + proc.stderr
