"""Shared fixtures: the shared datasets folder, a private cache, and the embedded model."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """``../shared/datasets`` (official files); tests using it skip where it is absent."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"official datasets not available at {SHARED_DATASETS}")
    return SHARED_DATASETS


@pytest.fixture()
def server(shared_datasets: Path) -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 serving ../shared/datasets; yields (base URL, request log)."""
    log: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            log.append(self.path)

    handler = functools.partial(Handler, directory=str(shared_datasets))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    httpd.shutdown()
    httpd.server_close()


USER_MODELS = Path(os.environ.get("LINGDIAG_CACHE") or Path.home() / ".cache" / "lingdiag") / "models"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own cache for datasets and responses, but converted models are
    shared with the user cache (converting takes ~20 s per model)."""
    base = tmp_path / "lingdiag-cache"
    base.mkdir()
    USER_MODELS.mkdir(parents=True, exist_ok=True)
    (base / "models").symlink_to(USER_MODELS)
    monkeypatch.setenv("LINGDIAG_CACHE", str(base))


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The embedded SmolLM2-135M-Instruct on the transformers backend, loaded once."""
    from lingdiag.models.providers import load_backend

    yield load_backend("smollm2-135m")


class FakeApi:
    """The server's state: what the next answers hold, and the paths requested so far."""

    def __init__(self) -> None:
        self.content: Any = "True"
        self.paths: list[str] = []
        self.delay = 0.0
        """Seconds each answer waits."""
        self.logprobs: Any = None
        """A function of the request body giving a ``/completions`` choice's ``logprobs`` (echo)."""
        self.url = ""


@pytest.fixture()
def fake_api() -> Iterator[FakeApi]:
    """A real OpenAI-compatible server on 127.0.0.1 (free port) answering every request with
    ``state.content`` (or ``state.content(request_body)``); tests change it between calls (a
    list, a number, null, an echoed key).
    """
    state = FakeApi()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            state.paths.append(self.path)
            time.sleep(state.delay)
            chat = self.path.endswith("/chat/completions")
            content = state.content(request) if callable(state.content) else state.content
            choice = {"message": {"role": "assistant", "content": content}} if chat else {"text": content}
            if state.logprobs is not None and not chat:
                choice["logprobs"] = state.logprobs(request)
            body = json.dumps({"choices": [{"index": 0, **choice}],
                               "usage": {"prompt_tokens": 5, "completion_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture()
def read_only() -> Iterator[Any]:
    """Makes a path read-only even for root (immutable attribute), undone afterwards."""
    made: list[Path] = []

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
                pytest.skip("chattr +i is not available")
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
        made.append(path)

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)
