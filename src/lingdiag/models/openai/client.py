"""Many JSON POSTs in flight at once, retried with backoff; the HTTP side of API backends.

``ApiClient.post_many`` sends a batch of requests over one ``httpx.AsyncClient`` with at
most ``concurrency`` in flight. A request that meets a 408/409/429 or 5xx answer, a
timeout, a dropped or refused connection or an unreadable body is retried after an
exponential backoff with jitter (or after the server's ``Retry-After``); one that still
fails, or fails for a reason retrying cannot fix (400, 401, 404, ...), comes back as an
``ApiFailure`` in its slot, so one bad request never sinks a batch. Counters of requests,
retries (by reason), failures and token usage are kept for ``meta.json``.

This module imports httpx; it is loaded only by the backends that need it.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from lingdiag.models.progress import tick

T = TypeVar("T")

RETRY_STATUS = frozenset({408, 409, 429})
"""Statuses worth retrying besides every 5xx (timeout, conflict, rate limit)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long to wait for an answer and how often to try again."""

    timeout: float = 120.0
    """Seconds without a byte from the server before an attempt is abandoned."""
    connect_timeout: float = 10.0
    deadline: float = 600.0
    """Seconds one attempt may take in all (``timeout`` bounds only the gap between two bytes,
    so a server sending a byte a second would otherwise hold a request forever)."""
    max_response_bytes: int = 64 * 2**20
    """Bytes one answer may have; a longer body is abandoned unread, not held in memory."""
    max_retries: int = 6
    """Retries after the first attempt; the request is recorded as failed after that."""
    backoff: float = 1.0
    """Wait before the first retry, in seconds; doubled on each later retry."""
    max_backoff: float = 60.0
    """Cap on a computed wait and on a server's ``Retry-After``."""


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """A request that got no usable answer."""

    message: str
    """What went wrong, safe to record (secrets redacted)."""
    status: int | None = None
    """HTTP status, or None when no response arrived."""
    retryable: bool = False
    reason: str = "http"
    """Counter key: ``http_<status>``, ``timeout``, ``connection`` or ``bad_body``."""
    retry_after: float | None = None
    """The server's requested wait in seconds, if it sent one."""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, even inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # A notebook already runs a loop in this thread; a fresh thread gets its own.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def token_count(value: Any) -> int:
    """A usage field's token count; 0 (unknown) for anything but a non-negative integer (a
    server sending ``"five"`` or ``2.5`` must not cost the run).
    """
    return value if type(value) is int and value >= 0 else 0


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date);
    None for a value that is neither (``Retry-After: soon``): the computed backoff applies.
    """
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value) if value.strip() else None
        except (ValueError, TypeError, IndexError):
            return None
        if parsed is None:
            return None
        seconds = parsed.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        return str(err.get("message") or err.get("detail") or err)[:300]
    return str(err)[:300]


class ApiClient:
    """Posts JSON to one base URL with bounded concurrency and retries."""

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        concurrency: int = 8,
        policy: RetryPolicy = RetryPolicy(),
        redact: Callable[[str], str] = lambda s: s,
    ) -> None:
        """Configure the client; nothing is sent until ``post_many``.

        Args:
            base_url: Prefix of every request path, e.g. ``http://127.0.0.1:8000/v1``.
            headers: Sent with every request (the ``Authorization`` header lives only here).
            concurrency: Requests in flight at once.
            policy: Timeouts and retries.
            redact: Applied to every failure message (removes secrets a server echoes back).
        """
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self.concurrency = concurrency
        self.policy = policy
        self._redact = redact
        self._rng = random.Random()
        self.counts: Counter[str] = Counter()
        """``requests``, ``retries``, ``retried_<reason>``, ``errors``, ``prompt_tokens``, ``completion_tokens``."""

    def post_many(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any] | ApiFailure]:
        """POST each ``(path, body)``; answers keep call order.

        Args:
            calls: Path relative to the base URL and JSON body of each request.

        Returns:
            The decoded JSON answer of each call, or an ``ApiFailure`` after retries.
        """
        return run_sync(self._post_all(calls))

    async def _post_all(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any] | ApiFailure]:
        gate = asyncio.Semaphore(self.concurrency)
        timeout = httpx.Timeout(self.policy.timeout, connect=self.policy.connect_timeout)
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        async with httpx.AsyncClient(headers=self._headers, timeout=timeout, limits=limits) as client:
            return list(await asyncio.gather(*(self._post(client, gate, p, b) for p, b in calls)))

    async def _post(self, client: httpx.AsyncClient, gate: asyncio.Semaphore, path: str,
                    body: dict[str, Any]) -> dict[str, Any] | ApiFailure:
        attempt = 0
        while True:
            async with gate:
                outcome = await self._attempt(client, path, body)
            if isinstance(outcome, dict):
                self.counts["requests"] += 1
                usage = outcome.get("usage")
                usage = usage if isinstance(usage, dict) else {}
                self.counts["prompt_tokens"] += token_count(usage.get("prompt_tokens"))
                self.counts["completion_tokens"] += token_count(usage.get("completion_tokens"))
                tick(requests=1, tokens=token_count(usage.get("completion_tokens")))
                return outcome
            if not outcome.retryable or attempt >= self.policy.max_retries:
                self.counts["errors"] += 1
                tick(requests=1)
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                return ApiFailure(outcome.message + tries, outcome.status, outcome.retryable, outcome.reason)
            attempt += 1
            self.counts["retries"] += 1
            self.counts[f"retried_{outcome.reason}"] += 1
            # Sleep outside the gate so other requests use the slot meanwhile.
            await asyncio.sleep(self.delay(attempt, outcome.retry_after))

    async def _read(self, client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> httpx.Response | None:
        """The response with its body read, or None once the body passes ``max_response_bytes``."""
        limit = self.policy.max_response_bytes
        async with client.stream("POST", url, json=body) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                return None
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    return None
                chunks.append(chunk)
        # The body is decoded already: the new response must not decode it again.
        headers = [(k, v) for k, v in response.headers.items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks),
                              request=response.request)

    def delay(self, attempt: int, server_wait: float | None) -> float:
        """Seconds before retry number ``attempt`` (1-based).

        The server's ``Retry-After`` wins when given (capped at ``max_backoff``), plus up to
        10% jitter; otherwise ``backoff × 2^(attempt-1)``, capped, with "equal jitter"
        (between half and all of it), so that clients that failed together spread out.
        """
        cap = self.policy.max_backoff
        if server_wait is not None:
            wait = min(server_wait, cap)
            return wait + self._rng.uniform(0, 0.1 * wait)
        wait = min(cap, self.policy.backoff * 2 ** (attempt - 1))
        return float(wait * self._rng.uniform(0.5, 1.0))

    async def _attempt(self, client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any] | ApiFailure:
        url = f"{self.base_url}/{path.lstrip('/')}"
        try:
            response = await asyncio.wait_for(self._read(client, url, body), self.policy.deadline)
        except (TimeoutError, httpx.TimeoutException) as e:
            why = f"within the {self.policy.deadline:g} s deadline" if isinstance(e, TimeoutError) else \
                f"within the timeout ({type(e).__name__})"
            return ApiFailure(f"no answer from {url} {why}", retryable=True, reason="timeout")
        except httpx.TransportError as e:
            return ApiFailure(self._redact(f"connection to {url} failed: {type(e).__name__}: {e}"),
                              retryable=True, reason="connection")
        if response is None:
            return ApiFailure(f"answer from {url} passes {self.policy.max_response_bytes:,} bytes; abandoned "
                              "(raise the max_response_bytes option if the server means it)", reason="too_large")
        code = response.status_code
        if code >= 400:
            retry = code in RETRY_STATUS or code >= 500
            return ApiFailure(self._redact(f"HTTP {code} from {url}: {_error_message(response)}"), code, retry,
                              f"http_{code}", retry_after(response.headers) if retry else None)
        try:
            data = response.json()
        except ValueError:
            return ApiFailure(f"unreadable JSON from {url} (truncated body?)", code, True, "bad_body")
        if not isinstance(data, dict):
            return ApiFailure(f"unexpected JSON from {url}: not an object", code, True, "bad_body")
        return data
