"""A server cannot hold a run forever nor fill its memory (issue 35): a real HTTP server on
127.0.0.1 that trickles a byte at a time, or sends a body larger than the cap, makes a failed
request within the deadline, never a hang; small limits keep the test short.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions
from lingdiag.records import GenerationRequest

BODY = b'{"choices": [{"index": 0, "text": "yes"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'


class Mode:
    kind = "trickle"


@pytest.fixture()
def hostile() -> Iterator[tuple[str, type[Mode]]]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if Mode.kind == "huge":  # no Content-Length: the size shows only while reading
                self.end_headers()
                try:
                    self.wfile.write(b'{"choices": [{"text": "' + b"x" * 200_000 + b'"}]}')
                except OSError:
                    pass
                return
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            try:
                for byte in BODY:  # a byte every 0.1 s: never 0.5 s without one
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", Mode
    finally:
        httpd.shutdown()
        httpd.server_close()


def _backend(url: str) -> OpenAIBackend:
    return OpenAIBackend("m", url, OpenAIOptions(timeout=0.5, deadline=2, max_response_bytes=10_000, max_retries=0,
                                                 completions=True, logprobs=False))


def test_a_trickling_server_meets_the_deadline(hostile: tuple[str, type[Mode]]) -> None:
    url, mode = hostile
    mode.kind = "trickle"
    start = time.monotonic()
    (answer,) = _backend(url).generate([GenerationRequest(prompt="Hi")])
    assert time.monotonic() - start < 6  # the whole body would take about 10 s
    assert answer.error is not None and "within the 2 s deadline" in answer.error


def test_a_huge_body_is_abandoned_unread(hostile: tuple[str, type[Mode]]) -> None:
    url, mode = hostile
    mode.kind = "huge"
    (answer,) = _backend(url).generate([GenerationRequest(prompt="Hi")])
    assert answer.error is not None and "passes 10,000 bytes" in answer.error
