"""A server answer whose content is not text (a list, a number, null) is a failed item with
its error recorded, never a cached answer nor a traceback (real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lingdiag.models.cache import CachedBackend, ResponseCache
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, GenerationRequest, response_to_json


def cli_run(url: str, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{url}",
         "--strategy", "zero-shot", "--limit", "4", "--out", str(out), "--model-option", "max_retries=0"],
        capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cache), "PYTHONPATH": str(Path("src").resolve())})


@pytest.mark.parametrize("content", [["True"], 7, None, {"text": "True"}])
def test_non_text_content_is_a_failed_item_and_never_cached(fake_api: Any, tmp_path: Path, content: Any) -> None:
    fake_api.content = content
    proc = cli_run(fake_api.url, tmp_path / "run", tmp_path / "cache")
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all("not text" in r["error"] for r in records)
    db = sqlite3.connect(tmp_path / "cache" / "responses.sqlite")
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)
    # The server fixed, the same command answers every item (nothing stale came from the cache).
    fake_api.content = "True"
    proc = cli_run(fake_api.url, tmp_path / "run", tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [r["error"] for r in records] == [None] * 4 and {r["label"] for r in records} == {"True"}


def test_poisoned_cache_entry_is_rejected_on_read(fake_api: Any, tmp_path: Path) -> None:
    backend = load_backend(f"openai:m@{fake_api.url}", {"max_retries": 0})
    cache = ResponseCache(tmp_path / "responses.sqlite")
    request = GenerationRequest(messages=(ChatMessage("user", "Is it true?"),))
    key = cache.key(backend.identity, request)
    # An entry written by an older version, that cached a list as the answer's text.
    # Its checksum is right: the value itself must be checked.
    value = json.dumps({**response_to_json(backend.generate([request])[0]), "text": ["True"]}, sort_keys=True)
    assert cache.db is not None
    columns = [row[1] for row in cache.db.execute("PRAGMA table_info(responses)")]
    row = {"key": key, "model": "m", "kind": "Generation", "value": value,
           "sha256": cache.checksum(key, value)}
    cache.db.execute(f"INSERT INTO responses VALUES ({','.join('?' * len(columns))})", [row[c] for c in columns])
    fake_api.content = "False"
    served = CachedBackend(backend, cache)
    (answer,) = served.generate([request])
    assert answer.text == "False" and answer.error is None
    assert served.usage()["cache_misses"] == 1
    (again,) = served.generate([request])
    assert again.text == "False" and served.usage()["cache_hits"] == 1
