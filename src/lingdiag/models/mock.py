"""A real backend driven by Python functions, for tests and dry runs (no model needed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lingdiag.models.base import Capabilities
from lingdiag.records import Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest


class MockBackend:
    """Answers generation requests with ``generate_fn`` and log-likelihoods with ``loglik_fn``.

    Either function may be omitted; the backend then declares that capability missing.
    ``calls`` counts requests served, so tests can check what reached the model.
    """

    def __init__(
        self,
        generate_fn: Callable[[GenerationRequest], str] | None = None,
        loglik_fn: Callable[[LoglikelihoodRequest], float] | None = None,
        name: str = "mock",
    ) -> None:
        self.generate_fn, self.loglik_fn, self.name = generate_fn, loglik_fn, name
        self.calls = 0

    @property
    def identity(self) -> dict[str, str]:
        """Backend and model name."""
        return {"backend": "mock", "model": self.name, "weights_sha256": ""}

    @property
    def capabilities(self) -> Capabilities:
        """Whatever functions were given (a generation function sees the whole request: its sampling and thinking)."""
        gen = self.generate_fn is not None
        return Capabilities(generate=gen, loglikelihood=self.loglik_fn is not None, constrained=False, sampling=gen,
                            thinking=gen)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """``generate_fn`` of each request."""
        assert self.generate_fn is not None
        self.calls += len(requests)
        return [Generation(text=self.generate_fn(r), n_tokens=1) for r in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """``loglik_fn`` of each request, one token each."""
        assert self.loglik_fn is not None
        self.calls += len(requests)
        return [LogLikelihood(logprob=self.loglik_fn(r), n_tokens=1, is_greedy=False) for r in requests]
