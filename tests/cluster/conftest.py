"""A stand-in OpenAI-compatible server on 127.0.0.1 for shard jobs running in other processes.

It answers every chat request with a label derived from the prompt (so any process, any
shard and the unsharded run get the same answer for the same item), counts requests per
path prefix (``/s2/v1/...`` is shard 2's server), and can hold requests unanswered.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers import Reply, serve


class FakeServer:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.hold: Callable[[str, int], bool] = lambda prefix, n: False
        """``hold(prefix, n)``: answer the n-th request (1-based) to ``prefix`` only once released."""
        self.released = threading.Event()
        self.url = ""

    def post(self, path: str, body: Any) -> Reply:
        """The answer to one chat request (``helpers.serve``)."""
        prefix = path.split("/v1/")[0]
        with self.lock:
            self.counts[prefix] += 1
            held = self.hold(prefix, self.counts[prefix])
        if held:
            self.released.wait(600)
        text = body["messages"][-1]["content"]
        answer = "True" if hashlib.sha256(text.encode()).digest()[0] % 2 else "False"
        return 200, {"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}

    def model(self, prefix: str) -> str:
        """The ``openai:`` spec of the server under ``prefix`` (may hold ``{shard}``)."""
        return f"openai:m@{self.url}/{prefix}/v1"


@pytest.fixture()
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    with serve(server.post) as url:
        server.url = url.removesuffix("/v1")
        yield server
        server.released.set()
