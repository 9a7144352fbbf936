"""``data fetch``: pinned files downloaded or copied from a mirror, checked against their SHA-256,
streamed to a temporary file beside the target (never held whole) and moved into place only once the
checksum matches; a refused, mismatched or killed fetch leaves the target as it was."""

import hashlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import SRC
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.registry import load_plugins


def test_fetch_from_loopback_url_verifies_and_caches(server: tuple[str, list[str]]) -> None:
    load_plugins()
    base, log = server
    (path,) = fetch_mod.fetch("imperfective", base)
    assert path == fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == fetch_mod.OFFICIAL["imperfective"][0].sha256
    assert log == ["/imperfective_nli/imperfectiveNLI.json"]
    fetch_mod.fetch("imperfective", base)  # already verified in the cache: no second download
    assert len(log) == 1


def test_pinned_url_is_the_public_release() -> None:
    load_plugins()
    (f,) = fetch_mod.OFFICIAL["imperfective"]
    assert f.url == ("https://raw.githubusercontent.com/boleima/ImperfectiveParadox/"
                     "f25d08e0d63bdafafc891d37d687c9162edfe4c0/data/imperfectiveNLI.json")


def test_checksum_mismatch_is_refused(tmp_path: Path) -> None:
    load_plugins()
    bad = tmp_path / "imperfective_nli"
    bad.mkdir()
    (bad / "imperfectiveNLI.json").write_text("[]")
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        fetch_mod.fetch("imperfective", str(tmp_path))
    assert not (fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json").exists()


def test_unreachable_server_is_a_dataset_error() -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="download failed"):
        fetch_mod.fetch("imperfective", "http://127.0.0.1:9")


def test_offline_fetch_names_from_and_the_mirror_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pinned URL unreachable (as on an offline cluster node): the error says how to go on.
    load_plugins()
    (f,) = fetch_mod.OFFICIAL["imperfective"]
    monkeypatch.setitem(fetch_mod.OFFICIAL, "imperfective", (replace(f, url="http://127.0.0.1:9/x.json"),))
    with pytest.raises(DatasetError) as e:
        fetch_mod.fetch("imperfective")
    message = str(e.value)
    assert "\n" not in message and message.startswith("http://127.0.0.1:9/x.json: download failed")
    assert message.endswith("laid out as imperfective_nli/imperfectiveNLI.json (or serve them) and run: "
                            "lingdiag data fetch imperfective --from DIR")


def test_a_mirror_without_the_file_names_the_layout(tmp_path: Path) -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="the mirror must hold imperfective_nli/imperfectiveNLI.json$"):
        fetch_mod.fetch("imperfective", str(tmp_path))


def test_official_spec_before_fetch_says_how() -> None:
    load_plugins()
    with pytest.raises(DatasetError, match="run: lingdiag data fetch imperfective .*--from DIR"):
        fetch_mod.official_path("imperfective", "imperfective_nli/imperfectiveNLI.json")


def test_cli_fetch_and_stats(server: tuple[str, list[str]]) -> None:
    base, _ = server
    runner = CliRunner()
    result = runner.invoke(app, ["fetch", "imperfective", "--from", base])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "stats", "imperfective", "--dataset", "official", "--json"])
    assert result.exit_code == 0, result.output
    assert '"n": 400' in result.output and '"Creation"' in result.output


def test_a_file_past_the_bound_is_refused_while_it_streams(server: tuple[str, list[str]], shared_datasets: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44 item 10: ``--from`` read a whole 400 MB answer into memory before its checksum."""
    import os

    load_plugins()
    base, _ = server
    monkeypatch.setenv("LINGDIAG_FETCH_MAX_BYTES", "4096")  # the real file is larger
    for mirror in (base, str(shared_datasets)):
        with pytest.raises(DatasetError, match=r"larger than a fetched file may be; the limit is 4096 bytes per "
                                               r"fetched file; raise it with LINGDIAG_FETCH_MAX_BYTES"):
            fetch_mod.fetch("imperfective", mirror)
    assert not (fetch_mod.datasets_dir() / "imperfective_nli" / "imperfectiveNLI.json").exists()
    monkeypatch.delenv("LINGDIAG_FETCH_MAX_BYTES")
    fifo = tmp_path / "fifo" / "imperfective_nli"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "imperfectiveNLI.json")
    with pytest.raises(DatasetError, match="not a regular file"):
        fetch_mod.fetch("imperfective", str(tmp_path / "fifo"))


BODY = 48 * 2**20
"""Bytes of the big file served (issue 57: a 400 MB answer took 327 MB of RSS)."""


def _body(size: int) -> bytes:
    return hashlib.sha256(b"seed").digest() * (size // 32)


class _Served:
    """A real HTTP server on 127.0.0.1 serving ``body`` at any path, pausing after ``pause_at`` bytes
    until ``go`` is set (a download caught mid-way)."""

    def __init__(self, body: bytes, pause_at: int | None = None) -> None:
        self.body, self.pause_at, self.go = body, pause_at, threading.Event()
        served = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(served.body)))
                self.end_headers()
                cut = len(served.body) if served.pause_at is None else served.pause_at
                try:
                    self.wfile.write(served.body[:cut])
                    self.wfile.flush()
                    served.go.wait(60)
                    self.wfile.write(served.body[cut:])
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture()
def big() -> Iterator[_Served]:
    served = _Served(_body(BODY))
    served.go.set()
    yield served
    served.httpd.shutdown()
    served.httpd.server_close()


def _official(monkeypatch: pytest.MonkeyPatch, body: bytes) -> fetch_mod.OfficialFile:
    f = fetch_mod.OfficialFile(url="unused", local="big/big.bin", sha256=hashlib.sha256(body).hexdigest())
    monkeypatch.setitem(fetch_mod.OFFICIAL, "big-suite", (f,))
    return f


def _leftovers(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir()) if target.parent.exists() else []


def test_a_download_streams_to_disk_never_held_whole(big: _Served, monkeypatch: pytest.MonkeyPatch) -> None:
    _official(monkeypatch, big.body)
    tracemalloc.start()
    try:
        (path,) = fetch_mod.fetch("big-suite", big.url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.read_bytes() == big.body
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB for a {BODY / 2**20:.0f} MiB file"  # main: twice the file
    assert _leftovers(path) == ["big.bin"]


def test_a_mismatched_download_leaves_neither_file_nor_temporary(big: _Served,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    f = _official(monkeypatch, b"another version")
    target = fetch_mod.datasets_dir() / f.local
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        fetch_mod.fetch("big-suite", big.url)
    assert _leftovers(target) == []
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"another version")  # a stale copy: fetched again, kept through a failed fetch
    monkeypatch.setenv("LINGDIAG_FETCH_MAX_BYTES", "1000")
    _official(monkeypatch, big.body)
    with pytest.raises(DatasetError, match="larger than a fetched file may be"):
        fetch_mod.fetch("big-suite", big.url)
    assert target.read_bytes() == b"another version" and _leftovers(target) == ["big.bin"]


KILLED = """import sys
from lingdiag.io import fetch
fetch.OFFICIAL["big-suite"] = (fetch.OfficialFile(url="unused", local="big/big.bin", sha256=sys.argv[2]),)
fetch.fetch("big-suite", sys.argv[1])
"""


def test_a_fetch_killed_mid_download_leaves_no_target_and_the_next_one_completes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = _body(8 * 2**20)
    f = _official(monkeypatch, body)
    target = fetch_mod.datasets_dir() / f.local
    served = _Served(body, pause_at=3 * 2**20)
    try:
        child = subprocess.Popen([sys.executable, "-c", KILLED, served.url, f.sha256], stderr=subprocess.PIPE,
                                 env={**os.environ, "PYTHONPATH": SRC})
        deadline = time.monotonic() + 60
        while not any(n.endswith(".lingdiag-tmp") and (target.parent / n).stat().st_size >= 2**20
                      for n in _leftovers(target)):
            assert child.poll() is None and time.monotonic() < deadline, child.stderr
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert child.stderr is not None
        child.stderr.close()
        assert not target.exists()  # only the temporary file holds the part downloaded
        served.go.set()
        (path,) = fetch_mod.fetch("big-suite", served.url)
        assert path.read_bytes() == body
    finally:
        served.go.set()
        served.httpd.shutdown()
        served.httpd.server_close()
