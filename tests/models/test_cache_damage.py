"""The response cache checks what it serves and never stops a run: a damaged file is set
aside with a warning, a read-only or full one is switched off for the run, a changed entry is
asked again (real SQLite files, a real HTTP server on 127.0.0.1, real processes)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.cache import CachedBackend, ResponseCache
from lingdiag.models.door import load_model

SRC = str(Path(__file__).resolve().parents[2] / "src")


def cache_file() -> Path:
    return Path(os.environ["LINGDIAG_CACHE"]) / "responses.sqlite"


def run_once(url: str, out: Path) -> Any:
    """A run through the cache, which is closed afterwards (as when the process ends)."""
    config = RunConfig(suite="imperfective", model=f"openai:m@{url}", axes={"strategy": ["zero-shot"]}, limit=4,
                       model_options={"max_retries": 0})
    cache = ResponseCache(cache_file())
    try:
        return run(config, out, backend=CachedBackend(load_model(config), cache), cache=False)
    finally:
        if cache.db is not None:
            cache.db.close()


def labels(out: Path) -> list[str]:
    return [json.loads(line)["label"] for line in (out / "items.jsonl").read_text().splitlines()]


def entries() -> int:
    return int(sqlite3.connect(cache_file()).execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def damage_garbage(path: Path) -> None:
    path.write_bytes(b"\x00garbage\xff" * 500)


def damage_truncated(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE filler (x TEXT)")
    db.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    os.truncate(path, path.stat().st_size // 2)


@pytest.mark.parametrize("damage", [damage_garbage, damage_truncated])
def test_damaged_file_is_set_aside_and_the_run_goes_on(fake_api: Any, tmp_path: Path, capsys: Any,
                                                       damage: Any) -> None:
    run_once(fake_api.url, tmp_path / "first")
    damage(cache_file())
    result = run_once(fake_api.url, tmp_path / "run")
    assert result.metrics["zero-shot"]["n_errors"] == 0 and labels(tmp_path / "run") == ["True"] * 4
    warnings = [line for line in capsys.readouterr().err.splitlines() if "damaged" in line]
    assert len(warnings) == 1 and "set aside as responses.sqlite.damaged-" in warnings[0]
    assert [p.name for p in cache_file().parent.glob("responses.sqlite.damaged-*")]
    assert entries() == 4  # a fresh cache holds this run's answers


def test_changed_bytes_in_an_entry_are_not_served(fake_api: Any, tmp_path: Path, capsys: Any) -> None:
    run_once(fake_api.url, tmp_path / "first")
    raw = cache_file().read_bytes()
    assert raw.count(b'"text": "True"') == 4
    cache_file().write_bytes(raw.replace(b'"text": "True"', b'"text": "Fals"', 1))
    fake_api.content = "False"
    sent = len(fake_api.paths)
    run_once(fake_api.url, tmp_path / "run")
    # The changed entry was asked again; the three intact ones were served.
    assert len(fake_api.paths) == sent + 1 and sorted(labels(tmp_path / "run")) == ["False", "True", "True", "True"]
    assert "1 entries failed their checksum" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["file", "directory"])
def test_read_only_cache_is_off_for_the_run(fake_api: Any, tmp_path: Path, capsys: Any, read_only: Any,
                                            what: str) -> None:
    run_once(fake_api.url, tmp_path / "first")
    fake_api.content = "False"  # so that an answer served from the cache shows
    read_only(cache_file() if what == "file" else cache_file().parent)
    result = run_once(fake_api.url, tmp_path / "run")
    assert result.metrics["zero-shot"]["n"] == 4 and result.metrics["zero-shot"]["n_errors"] == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "disabled for this run" in line]
    assert len(warnings) == 1
    assert labels(tmp_path / "run") == ["False"] * 4  # nothing came from the switched-off cache


def test_full_disk_turns_the_cache_off_and_keeps_every_answer(fake_api: Any, tmp_path: Path) -> None:
    def small_files() -> None:  # files may not grow past 24 kB: the cache's WAL cannot grow
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (24_000, 24_000))

    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{fake_api.url}",
         "--strategy", "zero-shot", "--limit", "4", "--out", str(out)],
        capture_output=True, text=True, timeout=300, preexec_fn=small_files,
        env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC,
             # A file-size limit truncates the bytecode a first import writes: keep .pyc files out of it.
             "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "disabled for this run" in proc.stderr
    assert len(labels(out)) == 4


def test_cache_commands_survive_damage(tmp_path: Path, read_only: Any) -> None:
    env = {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC}
    (tmp_path / "cache").mkdir()
    damage_garbage(tmp_path / "cache" / "responses.sqlite")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lingdiag", "cache", *args], capture_output=True, text=True,
                              timeout=120, env=env)

    stats = cli("stats", "--json")
    assert stats.returncode == 0 and "Traceback" not in stats.stderr and "damaged" in stats.stderr
    assert json.loads(stats.stdout)["entries"] == []
    cleared = cli("clear")
    assert cleared.returncode == 0 and "deleted 0 cached responses" in cleared.stdout
    read_only(tmp_path / "cache")
    refused = cli("clear")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].startswith("error: cannot clear the response cache")
