"""Builders shared by the tests: the ``lingdiag`` command line as a real process, item
records and result rows with every field a test does not care about filled in, and a real
JSON server on 127.0.0.1 (``serve``) for the fake model APIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lingdiag.records import ItemRecord, ResultRow

SRC = str(Path(__file__).resolve().parents[1] / "src")
"""This checkout's source, put first on the child's ``PYTHONPATH``."""


def lingdiag(cwd: Path, *args: str, env: Mapping[str, str] | None = None, inherit: bool = False,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m lingdiag ARGS`` run in ``cwd``, output captured as text.

    The child sees only ``PATH``, a response cache under ``cwd`` and this checkout's source
    (plus ``env``), so nothing of the developer's environment leaks in; ``inherit`` passes
    the whole environment on instead.
    """
    base = dict(os.environ) if inherit else {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**base, "PYTHONPATH": SRC, **(env or {})})


def item_record(item_id: str, label: str, gold: str | None, *, condition: str = "c",
                axes: Mapping[str, str] | None = None, tags: Mapping[str, str] | None = None,
                fields: Mapping[str, Any] | None = None, detail: Mapping[str, Any] | None = None,
                error: str | None = None) -> ItemRecord:
    """One answered item: ``correct`` is ``label == gold`` (None without a gold label or with an error)."""
    return ItemRecord(condition=condition, axes=dict(axes or {}), item_id=item_id, tags=dict(tags or {}),
                      fields=dict(fields or {}), prompts=[], outputs=[], label=label, detail=dict(detail or {}),
                      gold=gold, correct=None if gold is None or error else label == gold, error=error)


def result_row(model: str, condition: str, metrics: dict[str, Any], axes: dict[str, str] | None = None) -> ResultRow:
    """A result row as a run directory would give it (axes default to ``{"strategy": condition}``)."""
    return ResultRow(model, condition, axes if axes is not None else {"strategy": condition}, metrics)


Reply = tuple[int, Any]
"""An HTTP status and the JSON body answering it."""


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """Answer ``handler``'s request with ``payload`` as a JSON body."""
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def serve(post: Callable[[str, Any], Reply]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a free port) answering each POST with ``post(path, the
    request's JSON body)``; yields its base URL, ``http://127.0.0.1:PORT/v1``.
    """

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            send_json(self, *post(self.path, request))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
