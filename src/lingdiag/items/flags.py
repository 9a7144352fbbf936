"""Items that cannot be trusted, each flag with its reason.

Flags that chance alone raises on a few models are raised only **beyond chance**
(:mod:`lingdiag.items.chance`: a parametric bootstrap under the fitted model, the false-discovery
rate controlled over the cell's items):

- **negative discrimination**: the stronger the model, the more often it fails the item, the classic
  sign of a wrong gold label or an ambiguous item — its answers' correlation with ability is
  negative beyond what items that separate correctly give;
- **misfit**: an infit or outfit mean-square above the policy's bound, beyond chance.

The others are counts, not estimates:

- **near-zero discrimination** (a 2PL only): the whole 95% interval of the slope within the bound;
- **every model right / every model wrong**: uninformative here (its difficulty is the priors'); every
  model wrong says what the humans think of the gold where the suite has ratings;
- **one model**: answered (with gold) by one model only, so nothing is estimated for it;
- **humans disagree / humans tie**: another label has a higher (or the same) mean human rating.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lingdiag.items.human import Human


@dataclass(frozen=True, slots=True)
class FlagPolicy:
    """The bounds the flags use and how chance is measured, passed whole and recorded with the fit."""

    near_zero: float = 0.25
    """A discrimination whose 95% interval lies within ±this is near zero."""
    misfit: float = 2.0
    """An infit or outfit mean-square above this is a misfit."""
    fdr: float = 0.1
    """The false-discovery rate of the flags tested against chance."""
    draws: int = 100
    """Bootstrap draws of answers under the fitted model."""
    seed: int = 0


DEFAULT_POLICY = FlagPolicy()


@dataclass(frozen=True, slots=True)
class ItemStats:
    """What the flags read of one item."""

    n_models: int
    n_right: int
    discrimination: float
    low: float
    high: float
    infit: float
    outfit: float
    shared_slope: bool
    """The 1PL: one discrimination for every item, so none is flagged by it."""
    separation: float = math.nan
    """The correlation of its answers with the models' abilities."""
    reversed_q: float = math.nan
    """The q-value of a negative separation against chance."""
    misfit_q: float = math.nan
    """The q-value of its mean-square against chance."""


def flags(s: ItemStats, human: Human | None, policy: FlagPolicy = DEFAULT_POLICY) -> list[str]:
    """The item's flags, each with its reason, most serious first."""
    out = []
    if s.n_models < 2:
        out.append(f"one model: answered with gold by {s.n_models} model; nothing estimated")
        return out + _human(human)
    if s.n_right == s.n_models:
        out.append(f"every model right ({s.n_models}): uninformative here")
    elif s.n_right == 0:
        out.append(f"every model wrong ({s.n_models}): " + _all_wrong(human))
    else:
        if s.reversed_q <= policy.fdr:
            out.append(f"negative discrimination beyond chance (answers' correlation with ability {s.separation:.2f}, "
                       f"q = {s.reversed_q:.3f}): the stronger models fail it more often (a wrong gold label or an "
                       "ambiguous item?)")
        if not s.shared_slope and math.isfinite(s.discrimination) and -policy.near_zero < s.low and \
                s.high < policy.near_zero:
            out.append(f"near-zero discrimination {s.discrimination:.2f} [{s.low:.2f}, {s.high:.2f}]: it does not "
                       "separate strong models from weak ones")
        if s.misfit_q <= policy.fdr:
            out.append(f"misfit beyond chance: infit {s.infit:.2f}, outfit {s.outfit:.2f} (mean-squares; about 1 "
                       f"expected; q = {s.misfit_q:.3f})")
    return out + _human(human)


def _all_wrong(human: Human | None) -> str:
    if human is None:
        return "uninformative here, or a wrong gold label (no human ratings to tell)"
    if human.verdict == "agrees":
        return f"the humans agree with the gold (by {human.margin:.2f}): the models' weakness, not the label"
    return f"the humans prefer {human.preferred!r}: check the gold label"


def _human(human: Human | None) -> list[str]:
    if human is None or human.verdict == "agrees":
        return []
    if human.verdict == "ties":
        return [f"humans tie: {human.preferred!r} is rated as high as the gold label"]
    return [f"humans disagree: they prefer {human.preferred!r} (the gold label is rated {-human.margin:.2f} lower)"]
