"""A crash-safe response cache in SQLite (WAL), wrapped around any backend.

Key: SHA-256 of the backend identity (backend, model, weights hash) and the full request
(which carries the decoding settings: greedy, ``max_new_tokens``, stop strings,
constraint). Responses are committed per backend call, before the run writes the item
records, so a killed run restarted with the same cache re-sends nothing already answered.
Failed responses (``error`` set) are never cached. Several runs may share one file.
Every entry is checked before it is served (see ``ResponseCache``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lingdiag.errors import CacheError
from lingdiag.models.base import Backend, Capabilities, Precision, ReducedPrecision, ReportsUsage
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
from lingdiag.thinking import ChecksThinking, Thinking

R = TypeVar("R", Generation, LogLikelihood)
T = TypeVar("T")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


DAMAGE = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
"""SQLite error names meaning the file itself is damaged (set aside); any other failure
(read-only file or directory, full disk, I/O error) disables the cache for the run."""


class ResponseCache:
    """The SQLite store behind ``CachedBackend``.

    Each entry carries the SHA-256 of its key and stored value, checked on every read together
    with the value's shape (a non-finite number is a wrong shape): a changed, moved or poisoned
    entry is a miss (re-sent and overwritten), never
    an answer. A damaged file is renamed to ``<name>.damaged-<UTC time>`` and a fresh one
    started; a cache that cannot be written is switched off for the run. Both print one
    warning line, and neither stops a run nor loses an answer.
    """

    def __init__(self, path: Path, warn: Callable[[str], None] = _warn) -> None:
        self.path = Path(path)
        self.warn = warn
        self.db: sqlite3.Connection | None = None
        self.disabled: str | None = None
        """Why the cache is off for this run (None while it works)."""
        self.rejected = 0
        """Entries whose checksum or shape was wrong, found since the cache was opened."""
        self._guard(lambda: None, None)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                       "kind TEXT, value TEXT NOT NULL, sha256 TEXT)")
            if "sha256" not in [row[1] for row in db.execute("PRAGMA table_info(responses)")]:
                # Entries from before checksums have none: they are misses, re-sent once (as are
                # those checksummed over the value alone, before the key was part of it).
                db.execute("ALTER TABLE responses ADD COLUMN sha256 TEXT")
            # A cache that cannot take this run's answers is off from the start, not mid-run:
            # this small write fails on a read-only file.
            db.execute("PRAGMA user_version = 1")
        except BaseException:
            db.close()
            raise
        self.db = db

    def _set_aside(self) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        if self.db is not None:
            self.db.close()
            self.db = None
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                os.replace(part, part.with_name(f"{part.name}.damaged-{stamp}"))
        self.warn(f"response cache {self.path} is damaged; set aside as {self.path.name}.damaged-{stamp}, "
                  "starting a fresh one")

    def _disable(self, reason: str) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        self.disabled = reason
        self.warn(f"response cache {self.path} disabled for this run: {reason}")

    def _guard(self, operation: Callable[[], T], failed: T) -> T:
        """``operation()``; on a damaged file, set it aside and retry once on a fresh one;
        on any other storage failure, switch the cache off. ``failed`` is returned when off.
        """
        for attempt in (1, 2):
            if self.disabled is not None:
                return failed
            try:
                if self.db is None:
                    self._open()
                return operation()
            except sqlite3.DatabaseError as e:
                name = getattr(e, "sqlite_errorname", type(e).__name__)
                if name not in DAMAGE or attempt == 2:
                    self._disable(f"{e} ({name})")
                    continue
                try:
                    self._set_aside()
                except OSError as moved:
                    self._disable(f"it is damaged ({e}) and cannot be set aside: {moved.strerror or moved}")
            except OSError as e:
                self._disable(f"{e.strerror or e}")
        return failed

    @staticmethod
    def key(identity: dict[str, str], request: Request) -> str:
        """Stable hash of the model identity and the full request."""
        blob = json.dumps({"model": identity, "request": request.key()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    @staticmethod
    def checksum(key: str, value: str) -> str:
        """An entry's checksum: over its key and its value, so that a value moved under another
        key (two rows with values and checksums swapped) fails it like a changed value does.
        """
        return hashlib.sha256(f"{key}\n{value}".encode()).hexdigest()

    def _read(self, key: str, value: str, checksum: str | None) -> Response | None:
        """The entry's response, or None if its checksum (over key and value) or its shape is wrong."""
        if checksum != self.checksum(key, value):
            return None
        try:
            return response_from_json(json.loads(value))
        except (ValueError, TypeError, AttributeError):
            return None

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """The cached responses among ``keys`` whose entries are intact."""

        def read() -> dict[str, Response]:
            assert self.db is not None
            found: dict[str, Response] = {}
            for k in range(0, len(keys), 500):
                part = list(keys[k:k + 500])
                q = f"SELECT key, value, sha256 FROM responses WHERE key IN ({','.join('?' * len(part))})"
                for key, value, checksum in self.db.execute(q, part):
                    response = self._read(key, value, checksum)
                    if response is None:
                        self.rejected += 1
                    else:
                        found[key] = response
            return found

        before = self.rejected
        empty: dict[str, Response] = {}
        found = self._guard(read, empty)
        if self.rejected > before:
            self.warn(f"response cache {self.path}: {self.rejected - before} entries failed their checksum or "
                      "shape check; asking the model again")
        return found

    def put_many(self, rows: Sequence[tuple[str, str, Response]]) -> None:
        """Store ``(key, model, response)`` rows in one transaction (rows that would not read back are left out)."""
        data = []
        for k, m, r in rows:
            value = json.dumps(response_to_json(r), sort_keys=True)
            checksum = self.checksum(k, value)
            if self._read(k, value, checksum) is not None:  # a NaN or a wrong shape is never stored
                data.append((k, m, type(r).__name__, value, checksum))

        def write() -> None:
            assert self.db is not None
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("INSERT OR REPLACE INTO responses (key, model, kind, value, sha256) "
                                    "VALUES (?, ?, ?, ?, ?)", data)

        if data:
            self._guard(write, None)

    def stats(self) -> dict[str, Any]:
        """Rows per model and request kind, and the file size (``disabled`` says why, when unreadable)."""

        def count() -> list[Any]:
            assert self.db is not None
            return self.db.execute("SELECT model, kind, COUNT(*) FROM responses GROUP BY model, kind").fetchall()

        none: list[Any] = []
        rows = self._guard(count, none)
        result: dict[str, Any] = {"path": str(self.path),
                                  "bytes": self.path.stat().st_size if self.path.exists() else 0,
                                  "entries": [{"model": m, "kind": k, "count": c} for m, k, c in rows]}
        if self.disabled:
            result["disabled"] = self.disabled
        return result

    def clear(self, model: str | None = None) -> int:
        """Delete all entries (or one model's); returns how many.

        Raises:
            CacheError: The cache cannot be changed (read-only, full disk).
        """

        def delete() -> int:
            assert self.db is not None
            with self.db:
                cur = (self.db.execute("DELETE FROM responses WHERE model = ?", (model,)) if model
                       else self.db.execute("DELETE FROM responses"))
            self.db.execute("VACUUM")
            return cur.rowcount

        n = self._guard(delete, -1)
        if self.disabled:
            raise CacheError(f"cannot clear the response cache {self.path}: {self.disabled}")
        return n


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

    def precision(self) -> Precision | None:
        """The wrapped backend's precision (re-scoring bypasses the cache: it is asked only for fragile decisions)."""
        return self.inner.precision() if isinstance(self.inner, ReducedPrecision) else None

    def check_thinking(self, thinking: Thinking) -> None:
        """The wrapped backend's check, where it has one."""
        if isinstance(self.inner, ChecksThinking):
            self.inner.check_thinking(thinking)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Cached ``generate``."""
        return self._serve(requests, self.inner.generate)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Cached ``loglikelihood``."""
        return self._serve(requests, self.inner.loglikelihood)


def cached(backend: Backend) -> Backend:
    """``backend`` behind the SQLite response cache in ``$LINGDIAG_CACHE``."""
    from lingdiag.io.paths import cache_dir

    return CachedBackend(backend, ResponseCache(cache_dir() / "responses.sqlite"))
