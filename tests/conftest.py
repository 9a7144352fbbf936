"""Shared fixtures: the shared datasets folder, a private cache, and the embedded model."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fast_lane import pytest_configure, pytest_runtest_makereport, pytest_runtest_protocol  # noqa: F401  (hooks)
from helpers import Reply, load_as, serve

if TYPE_CHECKING:  # the model loads only in the tests that ask for it
    from lingdiag.models.hf import HFBackend

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"

# -- CI says what it skipped -------------------------------------------------------------------
# The README's install provides every extra and tool the tests use (xgrammar, ray, playwright,
# chromium, the llama.cpp server, wordfreq, the embedded model, the shared official data), so in
# CI (CI=true) a skip is a missing install, and the run fails naming it. Only environments no
# install can provide may skip; each kind below is matched against the skip's reason and listed
# by name at the end of the run.
ALLOWED_SKIP_KINDS: dict[str, re.Pattern[str]] = {
    "no SLURM (sbatch absent)": re.compile(r"\bno SLURM\b|\bsbatch\b"),
    "no GPU": re.compile(r"\bno (GPU|CUDA)\b|\bCUDA is not available\b"),
    "no immutable files (chattr +i unsupported)": re.compile(r"\bchattr \+i\b"),
}
_SKIPS: dict[str, list[tuple[str, str]]] = {"allowed": [], "refused": []}


def skip_kind(reason: str) -> str | None:
    """The allowed environment kind a skip reason names, or None when the install should provide it."""
    return next((kind for kind, pattern in ALLOWED_SKIP_KINDS.items() if pattern.search(reason)), None)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sorts every skip (not xfail) into an allowed environment kind or a refused missing install."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    kind = skip_kind(reason)
    if kind is None:
        _SKIPS["refused"].append((report.nodeid, reason))
    else:
        _SKIPS["allowed"].append((report.nodeid, kind))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Lists skipped environments by name; in CI, names each skip that a missing install caused."""
    allowed = sorted({kind for _, kind in _SKIPS["allowed"]})
    if allowed:
        terminalreporter.section("environments absent here (allowed skips)")
        for kind in allowed:
            count = sum(1 for _, k in _SKIPS["allowed"] if k == kind)
            terminalreporter.line(f"{kind}: {count} test(s) skipped")
    if _in_ci() and _SKIPS["refused"]:
        terminalreporter.section("CI=true: skips the README's install should have prevented", red=True)
        for nodeid, reason in _SKIPS["refused"]:
            terminalreporter.line(f"SKIPPED IN CI {nodeid}: {reason}", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a skip for a missing extra, tool or dataset fails the run."""
    if _in_ci() and _SKIPS["refused"] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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


def pytest_sessionstart(session: pytest.Session) -> None:
    """Converts the embedded SmolLM2 into the user cache once, before any test, in the process that
    starts pytest-xdist's workers (never in a worker): tests of the fast lane read its converted files
    and its loads, and on a fresh cache spread over workers no test would have converted it first."""
    if hasattr(session.config, "workerinput"):
        return
    from lingdiag.models.embedded import EMBEDDED, ensure_converted

    if EMBEDDED["smollm2-135m"].installed():  # otherwise the tests that need it say so
        ensure_converted("smollm2-135m")


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
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HFBackend]:
    """The embedded SmolLM2-135M-Instruct on the transformers backend, loaded once."""
    from lingdiag.models.hf import HFBackend

    yield load_as(HFBackend, "smollm2-135m")


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

    def post(path: str, request: Any) -> Reply:
        state.paths.append(path)
        time.sleep(state.delay)
        chat = path.endswith("/chat/completions")
        content = state.content(request) if callable(state.content) else state.content
        choice = {"message": {"role": "assistant", "content": content}} if chat else {"text": content}
        if state.logprobs is not None and not chat:
            choice["logprobs"] = state.logprobs(request)
        return 200, {"choices": [{"index": 0, **choice}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}

    with serve(post) as url:
        state.url = url
        yield state


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
