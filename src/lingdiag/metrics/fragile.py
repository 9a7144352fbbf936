"""Decisions that know their noise: the margin of a log-likelihood decision, and whether it is fragile.

A model run in bfloat16 or float16 gives log-probs a little away from float32's; a decision
between texts (a label among candidates, a good against a bad sentence) changes only if two of
its texts moved apart by more than the margin between them. The backend bounds how far one scored
token's log-prob moves (``models.base.Precision.per_token``: the dtype's fixed bound, or one measured
against float32 for the model, dtype and device by ``lingdiag.models.hf.calibrate``); a text of
``n`` scored tokens moves at most ``n`` times that. A decision is *fragile* when, for some pair of
its texts, lowering one and raising the other each by its bound changes the label.

The check knows no suite: it asks the condition's own parser what label perturbed log-probs
give, so a label chosen by summed, mean or any other monotone score of the log-probs is covered.
Region predictions (per-token answers) are not checked: shifting whole texts does not bound a
difference of regions within one text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any

from lingdiag.records import LogLikelihood

STEPS = 40
"""Bisection steps for a margin: the interval shrinks 2**40-fold, far below float32's resolution."""


@dataclass(frozen=True, slots=True)
class Decision:
    """How far a log-likelihood decision is from changing, recorded beside it in reduced-precision runs."""

    margin: float | None
    """Nats: the least shift between two of the item's texts (one lowered, the other raised, in
    proportion to their scored tokens) that changes the label; for a label chosen by summed
    log-probs, the chosen text's log-prob less the runner-up's. None: no shift changes it."""
    noise: float
    """Nats: the noise bound of the pair of texts the margin is measured on (their scored tokens times
    the per-token bound); of the widest pair when no shift changes the label."""
    fragile: bool
    """Whether the margin is within the noise: the reduced dtype may have chosen otherwise than float32."""
    rescored: bool = False
    """Whether the item's requests were scored again in float32 and the label is float32's."""

    def recorded(self) -> dict[str, Any]:
        """For ``items.jsonl`` (``rescored`` only when true)."""
        out: dict[str, Any] = {"margin": self.margin, "noise": self.noise, "fragile": self.fragile}
        return out | ({"rescored": True} if self.rescored else {})


def _shifted(responses: Sequence[LogLikelihood], down: int, up: int, amount: float) -> list[LogLikelihood]:
    """``responses`` with text ``down`` lowered and ``up`` raised by ``amount`` nats, shared by their token counts."""
    total = responses[down].n_tokens + responses[up].n_tokens
    out = list(responses)
    out[down] = replace(out[down], logprob=out[down].logprob - amount * out[down].n_tokens / total)
    out[up] = replace(out[up], logprob=out[up].logprob + amount * out[up].n_tokens / total)
    return out


def decide(label: Callable[[Sequence[LogLikelihood]], str], responses: Sequence[Any],
           per_token: float) -> Decision | None:
    """The margin and fragility of the decision ``label`` takes from ``responses``.

    Args:
        label: The condition's parser: responses to the label it predicts.
        responses: The item's answers, in request order.
        per_token: Bound on one scored token's log-prob error, in nats.

    Returns:
        The decision; None when it is not a choice between whole texts' log-probs (fewer than two
        texts, a generation, a failed request, per-token answers, a text of no scored token).
    """
    if len(responses) < 2 or not all(isinstance(r, LogLikelihood) and r.error is None and r.token_logprobs is None
                                      and r.n_tokens > 0 for r in responses):
        return None
    base = label(responses)
    best: tuple[float, float] | None = None
    fragile = False
    widest = 0.0
    for down, up in permutations(range(len(responses)), 2):
        n = responses[down].n_tokens + responses[up].n_tokens
        noise = per_token * n
        widest = max(widest, noise)
        if label(_shifted(responses, down, up, noise)) != base:
            fragile = True
        # Far enough that any monotone score (summed or per-token) of the two texts has crossed.
        high = (abs(responses[down].logprob) + abs(responses[up].logprob) + 1.0) * n
        if label(_shifted(responses, down, up, high)) == base:
            continue
        low = 0.0
        for _ in range(STEPS):
            mid = (low + high) / 2
            low, high = (low, mid) if label(_shifted(responses, down, up, mid)) != base else (mid, high)
        if best is None or high < best[0]:
            best = (high, noise)
    if best is None:
        return Decision(margin=None, noise=widest, fragile=fragile)
    return Decision(margin=best[0], noise=best[1], fragile=fragile)


N_FRAGILE = "n_fragile"
"""``metrics.json``: decisions within the reduced dtype's noise (present in reduced-precision runs only)."""
N_RESCORED = "n_rescored"
"""``metrics.json``: of those, how many were scored again in float32 (with ``rescore_fragile``)."""


def counts(decisions: Sequence[Mapping[str, Any] | None]) -> dict[str, int]:
    """``n_fragile`` and ``n_rescored`` over the records' recorded decisions; empty when none was checked."""
    checked = [d for d in decisions if d is not None]
    if not checked:
        return {}
    return {N_FRAGILE: sum(bool(d["fragile"]) for d in checked),
            N_RESCORED: sum(bool(d.get("rescored")) for d in checked)}


def table_note(metrics: Mapping[str, Mapping[str, Any]]) -> str:
    """The line above a table of a reduced-precision run: fragile decisions per condition; empty if none checked."""
    rows = {c: m for c, m in metrics.items() if N_FRAGILE in m}
    if not rows:
        return ""
    parts = [f"{c}: {m[N_FRAGILE]} of {m['n']}" + (f" ({m[N_RESCORED]} re-scored in float32)" if m[N_RESCORED] else "")
             for c, m in rows.items()]
    return ("**Fragile decisions** (margin within the measured noise of the model's reduced dtype, so float32 "
            "may decide otherwise; meta.json `precision`): " + "; ".join(parts) + "\n\n")
