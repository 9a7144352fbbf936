"""Requests ``lingdiag view`` refuses, against the real command: a line, start or seed that is not a plain
whole number (``²``, 5,000 digits) is a 400 page with the CSP headers and no traceback in the terminal;
on a wildcard address only Host names of the machine itself are answered (DNS rebinding)."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from helpers import SRC

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend

pytest.importorskip("starlette")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view-app")
    evaluate(RunConfig(suite="imperfective", model="mock", dataset="builtin", axes={"strategy": ["zero-shot"]},
                       limit=4), MockBackend(lambda r: "True"), root / "a")
    return root


@contextmanager
def viewing(root: Path, *args: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``lingdiag view ROOT --port 0 ARGS`` as a process; its port."""
    with subprocess.Popen([sys.executable, "-m", "lingdiag", "view", str(root), "--port", "0", *args], cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC}) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            assert line.startswith("lingdiag view: http://"), line
            yield int(urlsplit(line.split()[2]).port or 0), proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _get(port: int, path: str, host: str | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Host": host} if host else {})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


BAD = ["²", "١", "9" * 5000, "-1", "1e3", " 1"]
"""A superscript and an Arabic-Indic digit (``isdigit`` is true, ``int`` fails or reads another script),
5,000 digits (past ``int``'s limit), a sign, a float, a space."""


def test_a_number_that_is_not_plain_digits_is_a_400_with_the_headers(root: Path) -> None:
    with viewing(root) as (port, proc):
        for value in BAD:
            for path in (f"/item?id=0/a&line={quote(value)}", f"/items?id=0/a&start={quote(value)}",
                         f"/compare?a=0/a&b=0/a&seed={quote(value)}"):
                response = _get(port, path)
                assert response.status == 400, path
                assert response.getheader("Content-Security-Policy", "").startswith("default-src 'none'")
                assert response.getheader("X-Content-Type-Options") == "nosniff"
        assert _get(port, "/item?id=0/a&line=3").status == 200
        assert _get(port, f"/item?id=0/a&line={'9' * 18}").status == 404  # a whole number past the last line
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err and "ValueError" not in err, err


def test_on_a_wildcard_address_only_the_machines_own_names_are_answered(root: Path) -> None:
    import psutil

    with viewing(root, "--host", "0.0.0.0") as (port, _):
        assert _get(port, "/", host=f"attacker.example:{port}").status == 400  # main answered 200
        assert _get(port, "/", host="rebound.example").status == 400
        mine = ["127.0.0.1", "localhost", socket.gethostname(), "[::1]"]
        mine += [a.address for found in psutil.net_if_addrs().values() for a in found if a.family == socket.AF_INET]
        for name in mine:
            assert _get(port, "/", host=f"{name}:{port}").status == 200, name
