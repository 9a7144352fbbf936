"""The scoring-policy axis: how a log-likelihood suite's texts are scored (``lingdiag.scoring``).

A suite whose items are scored by log-likelihood declares the axis (``axis()``) and makes one
condition per chosen policy (``chosen``); the run records every policy a condition's requests
carry in ``meta.json``'s ``scoring_policies``. How much the policies disagree is read from the
records by ``lingdiag.analysis.sweep``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from lingdiag.conditions.expander import Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.records import LoglikelihoodRequest, Request
from lingdiag.rundir.parts import Part, register_part
from lingdiag.scoring import LINGDIAG, ScoringPolicy, policy, policy_names
from lingdiag.suite import Axis

AXIS = "scoring-policy"
PART = "scoring_policies"
"""``meta.json``'s part: condition → the scoring policies its requests carry, where not only the default."""


class PolicyPart(Part):
    """One scoring policy a condition's log-likelihood requests carry (``lingdiag.scoring``)."""

    name: str
    prefix: str
    prefix_scope: str
    leading_space: bool
    score_first_token: bool
    whitespace_correction: bool


def axis(*default: str) -> Axis:
    """The ``--scoring-policy`` axis (see ``lingdiag.scoring`` for the presets); ``default``: the
    policies run when none is named (``lingdiag`` when empty).
    """
    return Axis(AXIS, policy_names(), default or (LINGDIAG.name,),
                "how texts are scored: what precedes them, leading space, first token (lingdiag.scoring)")


def chosen(axes: Mapping[str, Sequence[str]]) -> list[ScoringPolicy]:
    """The policies selected on the axis."""
    return [policy(name) for name in axes[AXIS]]


def policies(requests: Sequence[Request], named: bool) -> list[dict[str, Any]]:
    """The scoring policies ``requests`` carry, as ``meta.json`` records them: all of them for a
    condition on the scoring-policy axis (``named``), else those other than the default (so the
    ``meta.json`` of the suites that never choose one stays as it was).
    """
    seen = {r.policy for r in requests if isinstance(r, LoglikelihoodRequest) and not r.messages}
    return [p.recorded() for p in sorted(seen, key=lambda p: p.name) if named or p != LINGDIAG]


@dataclass(frozen=True)
class ScoringPolicyAxis(Plain):
    """``meta.json``'s ``scoring_policies``: the suites make the conditions, the run records their policies."""

    part: ClassVar[str] = PART
    takes: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def of(cls, config: RunConfig) -> ScoringPolicyAxis:
        """The one recorder (every run's requests may carry a policy)."""
        return cls()

    def recorded(self, ran: Ran) -> dict[str, list[dict[str, Any]]] | None:
        """Condition → the policies of its requests, for every condition reached so far."""
        named = {c.name: policies(ran.requests[c.name], AXIS in c.axes) for c in ran.conditions}
        return {c: ps for c, ps in named.items() if ps} or None


register_part(PART, dict[str, list[PolicyPart]])
register_axis('scoring_policy', order=30)(ScoringPolicyAxis.of)
