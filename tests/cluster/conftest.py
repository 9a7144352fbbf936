"""A stand-in OpenAI-compatible server on 127.0.0.1 for shard jobs running in other processes.

It answers every chat request with a label derived from the prompt (so any process, any
shard and the unsharded run get the same answer for the same item), counts requests per
path prefix (``/s2/v1/...`` is shard 2's server), and can hold requests unanswered.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class FakeServer:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.hold: Callable[[str, int], bool] = lambda prefix, n: False
        """``hold(prefix, n)``: answer the n-th request (1-based) to ``prefix`` only once released."""
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                prefix = self.path.split("/v1/")[0]
                with server.lock:
                    server.counts[prefix] += 1
                    held = server.hold(prefix, server.counts[prefix])
                if held:
                    server.released.wait(600)
                text = body["messages"][-1]["content"]
                answer = "True" if hashlib.sha256(text.encode()).digest()[0] % 2 else "False"
                data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def model(self, prefix: str) -> str:
        """The ``openai:`` spec of the server under ``prefix`` (may hold ``{shard}``)."""
        return f"openai:m@{self.url}/{prefix}/v1"


@pytest.fixture()
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    threading.Thread(target=server.httpd.serve_forever, daemon=True).start()
    yield server
    server.released.set()
    server.httpd.shutdown()
    server.httpd.server_close()
