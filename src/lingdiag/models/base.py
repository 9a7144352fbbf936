"""The model backend contract.

A backend takes whole lists of requests and returns one response per request, in order.
Batching, caching and prefix reuse live behind this contract, so the orchestrator never
calls a model per item. Backends declare what they can do; the runner checks
capabilities before sending anything, so an API backend never fakes a tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from lingdiag.model_spec import ModelSpec
from lingdiag.records import Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest, Request, Response


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the first occurrence of each stop string, in ``stop`` order.

    Every backend cuts its answers here, so one request gives one answer text whichever
    backend served it; an empty stop string matches nothing.
    """
    for x in stop:
        if x and x in text:
            text = text[:text.index(x)]
    return text


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can serve, declared by its provider from the spec and the options alone (no weight
    loaded: ``Loader.capabilities``), so that a run or a study asking what it cannot do is refused when
    it is planned.
    """

    generate: bool = True
    loglikelihood: bool = True
    """Prompt log-probs (``LoglikelihoodRequest``)."""
    constrained: bool = False
    """Whether ``GenerationRequest.constraint`` is enforced (not merely ignored)."""
    sampling: bool = False
    """Whether ``GenerationRequest.sampling`` is honoured (else greedy would pass for a sample)."""
    thinking: bool = False
    """Whether ``GenerationRequest.thinking`` is honoured (else every setting would answer alike)."""

    def lacking(self, needs: Iterable[str]) -> list[str]:
        """The capabilities of ``needs`` (field names: ``sampling``, ``thinking``...) this backend lacks, in order."""
        return [n for n in dict.fromkeys(needs) if not getattr(self, n)]


@runtime_checkable
class Backend(Protocol):
    """A model that answers batches of requests.

    Implementations must return exactly one response per request, in request order,
    and must be deterministic for the same inputs (greedy decoding only).
    """

    @property
    def identity(self) -> dict[str, str]:
        """Backend name, model name and weights hash; the cache key's model part."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What this backend serves."""
        ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy generation for each request.

        Args:
            requests: Generation requests; chat ones use the model's chat template.

        Returns:
            One ``Generation`` per request, in the same order.
        """
        ...

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Summed log-probability of each continuation given its context.

        Args:
            requests: Log-likelihood requests.

        Returns:
            One ``LogLikelihood`` per request, in the same order.
        """
        ...


@runtime_checkable
class ReportsUsage(Protocol):
    """A backend that counts what it did; the runner records the counts in ``meta.json``."""

    def usage(self) -> dict[str, int]:
        """Counters since the backend was built (e.g. requests, retries, errors, tokens)."""
        ...


@dataclass(frozen=True, slots=True)
class Precision:
    """How far a reduced-precision backend's log-probs may be from float32's, and how to ask float32.

    A decision between two texts can only change if their log-probs moved apart by more than its
    margin; ``per_token`` bounds how far one scored token's log-prob moves (measured against the same
    weights in float32), so a margin above the two texts' bounds summed cannot flip
    (``lingdiag.metrics.fragile``).
    """

    dtype: str
    """The reduced dtype (``bfloat16``, ``float16``, ``bfloat16-mixed``)."""
    per_token: float
    """Bound, in nats, on how far one scored token's log-prob is from float32's."""
    rescore: Callable[[Sequence[LoglikelihoodRequest]], list[LogLikelihood]] | None = None
    """Scores requests again in float32 on the same device (``rescore_fragile=float32``); None: not asked."""


@runtime_checkable
class ReducedPrecision(Protocol):
    """A backend that may compute in less than float32 and knows its noise."""

    def precision(self) -> Precision | None:
        """Its noise and float32 re-scoring; None when it computes in float32."""
        ...


@dataclass(frozen=True)
class Loader:
    """What a provider module exports: its options and how to build a backend from a spec."""

    options: type[BaseModel]
    """A pydantic model with ``extra="forbid"``."""
    load: Callable[[ModelSpec, Any], Backend]
    """``load(spec, options)`` with ``options`` an instance of ``options``, passed on whole."""
    capabilities: Callable[[ModelSpec, Any], Capabilities]
    """What a backend of ``(spec, options)`` can serve, without loading it: what its ``capabilities`` will say."""
    check: Callable[[ModelSpec, Any], None] | None = None
    """What can be refused without loading a weight (a local model that is not there, a device this
    machine lacks, a hub revision not in the offline cache), as ``load`` would refuse it: a study checks
    every model of its plan so before any loads."""


def dispatch(backend: Backend, requests: Sequence[Request]) -> list[Response]:
    """Send mixed requests to ``backend`` in one call per kind; answers keep request order."""
    gen = [(i, r) for i, r in enumerate(requests) if isinstance(r, GenerationRequest)]
    ll = [(i, r) for i, r in enumerate(requests) if isinstance(r, LoglikelihoodRequest)]
    out: list[Response | None] = [None] * len(requests)
    if gen:
        for (i, _), g in zip(gen, backend.generate([r for _, r in gen]), strict=True):
            out[i] = g
    if ll:
        for (i, _), lp in zip(ll, backend.loglikelihood([r for _, r in ll]), strict=True):
            out[i] = lp
    return [r for r in out if r is not None]
