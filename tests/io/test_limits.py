"""Bounded reads: a run-directory file is read at its own size, never its bound's (issue 57: a 1 KB
run's resume or report died with a MemoryError under an address-space limit); items are streamed a
line at a time; a file that grows past the bound while read is refused in one line."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from helpers import SRC, fixture_runs

from lingdiag.errors import RunError
from lingdiag.io.limits import RUN_FILE_BYTES, read_regular, regular_lines

ADDRESS_SPACE = 2_000_000 * 1024
"""``ulimit -v 2000000`` (kilobytes), as on a shared login node."""


def test_a_small_file_allocates_its_size_not_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    path.write_bytes(b"x" * 1000)
    assert RUN_FILE_BYTES.value == 2 * 1024**3
    tracemalloc.start()
    try:
        assert read_regular(path) == b"x" * 1000
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # main allocated the 2 GiB bound + 1 before reading


def test_items_are_streamed_a_line_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    line = json.dumps({"text": "y" * 1000}).encode() + b"\n"
    path.write_bytes(line * 30_000)  # 30 MB
    tracemalloc.start()
    try:
        count = sum(1 for raw in regular_lines(path) if raw == line)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 30_000 and peak < 2_000_000, peak


def test_lines_split_at_newline_only(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes("a\u2028b\u0085c\rd\nlast".encode())
    assert list(regular_lines(path)) == ["a\u2028b\u0085c\rd\n".encode(), b"last"]


def test_a_file_growing_past_the_bound_while_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_RUN_FILE_MAX_BYTES", "5000")
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"z" * 99 + b"\n")
    lines = regular_lines(path)
    assert next(lines) == b"z" * 99 + b"\n"
    with path.open("ab") as f:  # a writer appends after the size was checked
        f.write((b"z" * 99 + b"\n") * 100)
    with pytest.raises(RunError, match=r"items.jsonl: larger than expected; the limit is 5000 bytes"):
        list(lines)
    path.write_bytes(b"z" * 5001)
    with pytest.raises(RunError, match="larger than expected"):
        read_regular(path)
    path.write_bytes(b"z" * 5000)
    assert len(read_regular(path)) == 5000


def test_a_file_longer_than_fstat_says_is_read_to_its_end() -> None:
    # /proc files say size 0 and hold text: the read goes past what fstat said, in chunks.
    status = read_regular(Path("/proc/self/status"))
    assert b"VmPeak" in status


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _lingdiag_limited(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, preexec_fn=_limited,
                          env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cwd / "cache"), "PYTHONPATH": SRC})


def test_report_and_a_resumed_run_work_under_an_address_space_limit(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = "True"
    config = tmp_path / "run.yaml"
    config.write_text(f"suite: imperfective\nmodel: openai:m@{fake_api.url}\nchunk_items: 2\n")
    args = ("run", "imperfective", "--config", str(config), "--strategy", "zero-shot", "--limit", "6", "--no-cache",
            "--out", str(tmp_path / "run"))
    first = subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC,
                                              "LINGDIAG_CACHE": str(tmp_path / "cache")})
    assert first.returncode == 0, first.stderr
    items = tmp_path / "run" / "items.jsonl"
    whole = items.read_bytes()
    lines = whole.split(b"\n")
    items.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:25])  # killed mid-line after three records
    before = len(fake_api.paths)
    resumed = _lingdiag_limited(tmp_path, *args)
    assert resumed.returncode == 0, resumed.stderr
    assert "MemoryError" not in resumed.stderr
    assert len(fake_api.paths) - before == 3  # the three items lost, and only those
    assert items.read_bytes() == whole  # the same records as the uninterrupted run
    report = _lingdiag_limited(tmp_path, "report", str(tmp_path / "run"))
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    assert "zero-shot" in report.stdout


def test_a_run_too_large_for_the_memory_allowed_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    fixture = fixture_runs("rundir-6472672") / "plain"
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_bytes((fixture / "meta.json").read_bytes())
    first = json.loads((fixture / "items.jsonl").read_text(encoding="utf-8").split("\n")[0])
    with (run / "items.jsonl").open("w", encoding="utf-8") as f:
        for k in range(45_000):  # 90 MB of records, a few hundred MB once read
            f.write(json.dumps({**first, "item_id": f"i{k}", "fields": {**first["fields"], "pad": "x" * 2000}}) + "\n")

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (250 * 2**20, 250 * 2**20))

    out = subprocess.run([sys.executable, "-m", "lingdiag", "report", str(run)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, preexec_fn=small,
                         env={"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC})
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.stderr.strip() == ("error: out of memory (an address-space limit of 250 MiB): lingdiag report needs "
                                  "more than this process may use here; run it where more memory is allowed")
