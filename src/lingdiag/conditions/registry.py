"""The condition expanders of a run, in the order they apply."""

from __future__ import annotations

from collections.abc import Callable

from lingdiag.conditions.after_thinking import AfterThinkingAxis
from lingdiag.conditions.expander import Expander
from lingdiag.conditions.precision import PrecisionAxis
from lingdiag.conditions.scoring_policy import ScoringPolicyAxis
from lingdiag.conditions.thinking import ThinkingAxis
from lingdiag.config import RunConfig

EXPANDERS: tuple[Callable[[RunConfig], Expander], ...] = (
    ThinkingAxis.of,  # first: an after-thinking twin follows each thinking setting's plain condition
    AfterThinkingAxis.of,
    ScoringPolicyAxis.of,
    PrecisionAxis.of,
)
"""A new axis is one module with an ``Expander`` and one line here."""


def expanders(config: RunConfig) -> list[Expander]:
    """Every expander, built from ``config`` (options checked, files read, here)."""
    return [build(config) for build in EXPANDERS]
