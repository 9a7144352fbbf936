"""Reduced precision: a backend computing in less than float32 records each log-likelihood decision
with its margin, and whether float32 noise could have flipped it (``lingdiag.metrics.fragile``).

The dtype is the backend's (``--dtype``); the run records its noise bound in ``meta.json``'s
``precision`` part and marks each decision in the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lingdiag.conditions.expander import Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.models.base import Backend, Precision, ReducedPrecision


def precision(backend: Backend) -> Precision | None:
    """``backend``'s noise bound and float32 re-scoring (None: it computes in float32)."""
    return backend.precision() if isinstance(backend, ReducedPrecision) else None


@dataclass(frozen=True)
class PrecisionAxis(Plain):
    """``meta.json``'s ``precision`` part."""

    part: ClassVar[str] = "precision"
    takes: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def of(cls, config: RunConfig) -> PrecisionAxis:
        """The one recorder (the dtype is the backend's)."""
        return cls()

    def recorded(self, ran: Ran) -> dict[str, Any] | None:
        """The dtype, its per-token noise bound and the re-scoring asked (None in float32); in a merge,
        the shards' (compared equal), as no backend is at hand.
        """
        if ran.backend is None:
            return None if ran.shard is None or ran.shard.precision is None else dict(ran.shard.precision)
        p = precision(ran.backend)
        if p is None:
            return None
        return {"dtype": p.dtype, "per_token_noise": p.per_token, "rescore_fragile": "float32" if p.rescore else None}


register_axis('precision', order=40)(PrecisionAxis.of)
