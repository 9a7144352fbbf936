"""A crash-safe response cache in SQLite (WAL), wrapped around any backend.

Key: SHA-256 of the backend identity (backend, model, weights hash) and the full request
(which carries the decoding settings: greedy, ``max_new_tokens``, stop strings,
constraint). Responses are committed per backend call, before the run writes the item
records, so a killed run restarted with the same cache re-sends nothing already answered.
Failed responses (``error`` set) are never cached. Several runs may share one file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lingdiag.models.base import Backend, Capabilities, ReportsUsage
from lingdiag.records import (
    Generation,
    GenerationRequest,
    LogLikelihood,
    LoglikelihoodRequest,
    Request,
    Response,
    response_from_json,
    response_to_json,
)

R = TypeVar("R", Generation, LogLikelihood)


class ResponseCache:
    """The SQLite store behind ``CachedBackend``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                        "kind TEXT, value TEXT NOT NULL)")

    @staticmethod
    def key(identity: dict[str, str], request: Request) -> str:
        """Stable hash of the model identity and the full request."""
        blob = json.dumps({"model": identity, "request": request.key()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """The cached responses among ``keys``."""
        found: dict[str, Response] = {}
        for k in range(0, len(keys), 500):
            part = list(keys[k:k + 500])
            q = f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(part))})"
            for key, value in self.db.execute(q, part):
                found[key] = response_from_json(json.loads(value))
        return found

    def put_many(self, rows: Sequence[tuple[str, str, Response]]) -> None:
        """Store ``(key, model, response)`` rows in one transaction."""
        data = [(k, m, type(r).__name__, json.dumps(response_to_json(r), sort_keys=True)) for k, m, r in rows]
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", data)

    def stats(self) -> dict[str, Any]:
        """Rows per model and request kind, and the file size."""
        rows = self.db.execute("SELECT model, kind, COUNT(*) FROM responses GROUP BY model, kind").fetchall()
        return {"path": str(self.path), "bytes": self.path.stat().st_size,
                "entries": [{"model": m, "kind": k, "count": c} for m, k, c in rows]}

    def clear(self, model: str | None = None) -> int:
        """Delete all entries (or one model's); returns how many."""
        with self.db:
            cur = (self.db.execute("DELETE FROM responses WHERE model = ?", (model,)) if model
                   else self.db.execute("DELETE FROM responses"))
        self.db.execute("VACUUM")
        return cur.rowcount


class CachedBackend:
    """Serves what the cache holds and sends only the misses to the wrapped backend."""

    def __init__(self, inner: Backend, cache: ResponseCache) -> None:
        self.inner, self.cache = inner, cache
        self.hits = self.misses = 0

    @property
    def identity(self) -> dict[str, str]:
        """The wrapped backend's identity."""
        return self.inner.identity

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped backend's capabilities."""
        return self.inner.capabilities

    def _serve(self, requests: Sequence[Any], call: Callable[[list[Any]], list[R]]) -> list[R]:
        identity = self.inner.identity
        keys = [self.cache.key(identity, r) for r in requests]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        # The same request twice in one call is sent once.
        unique: dict[str, int] = {}
        for i in todo:
            unique.setdefault(keys[i], i)
        fresh = call([requests[i] for i in unique.values()]) if unique else []
        answers: dict[str, Any] = dict(found)
        answers.update(zip(unique, fresh, strict=True))
        self.cache.put_many([(k, identity.get("model", ""), answers[k]) for k in unique if answers[k].error is None])
        self.hits += len(requests) - len(todo)
        self.misses += len(todo)
        return [answers[k] for k in keys]

    def usage(self) -> dict[str, int]:
        """Cache hits and misses, plus the wrapped backend's counters where it keeps any."""
        inner = self.inner.usage() if isinstance(self.inner, ReportsUsage) else {}
        return {"cache_hits": self.hits, "cache_misses": self.misses, **inner}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Cached ``generate``."""
        return self._serve(requests, self.inner.generate)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Cached ``loglikelihood``."""
        return self._serve(requests, self.inner.loglikelihood)
