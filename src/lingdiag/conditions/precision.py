"""Reduced precision: a backend computing in less than float32 records each log-likelihood decision
with its margin, and whether float32 noise could have flipped it (``lingdiag.metrics.fragile``).

The dtype is the backend's (``--dtype``); the run records its noise bound in ``meta.json``'s
``precision`` part and marks each decision in the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from lingdiag.conditions.expander import Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.models.base import Backend, Precision, ReducedPrecision
from lingdiag.rundir.parts import Number, Part, register_part

PART = "precision"
"""``meta.json``'s part: a reduced-precision run's dtype, noise bound and re-scoring; absent in float32."""


class PrecisionPart(Part):
    """``precision``: a reduced-precision run's dtype, per-token noise bound and re-scoring."""

    dtype: str
    per_token_noise: Number
    rescore_fragile: Literal["float32"] | None


def precision(backend: Backend) -> Precision | None:
    """``backend``'s noise bound and float32 re-scoring (None: it computes in float32)."""
    return backend.precision() if isinstance(backend, ReducedPrecision) else None


@dataclass(frozen=True)
class PrecisionAxis(Plain):
    """``meta.json``'s ``precision`` part."""

    part: ClassVar[str] = PART
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
            shard: PrecisionPart | None = None if ran.shard is None else ran.shard.parts.get(PART)
            return None if shard is None else shard.to_json()
        p = precision(ran.backend)
        if p is None:
            return None
        return {"dtype": p.dtype, "per_token_noise": p.per_token, "rescore_fragile": "float32" if p.rescore else None}


register_part(PART, PrecisionPart)
register_axis('precision', order=40)(PrecisionAxis.of)
