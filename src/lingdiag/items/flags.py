"""Items that cannot be trusted, each flag with its reason.

- **negative discrimination**: the stronger the model, the more often it fails the item, the classic
  sign of a wrong gold label or an ambiguous item (``clear`` where the whole 95% interval is below 0);
- **near-zero discrimination**: the item does not separate strong models from weak ones;
- **every model right / every model wrong**: uninformative here (its difficulty is the priors');
- **one model**: answered (with gold) by one model only, so nothing is estimated for it;
- **misfit**: infit or outfit mean-square above the policy's bound (answers the model does not expect);
- **humans disagree / humans tie**: another label has a higher (or the same) mean human rating.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lingdiag.items.human import Human


@dataclass(frozen=True, slots=True)
class FlagPolicy:
    """The bounds the flags use, passed whole and recorded with the fit."""

    near_zero: float = 0.25
    """A discrimination of absolute value below this is near zero."""
    misfit: float = 2.0
    """An infit or outfit mean-square above this is a misfit."""


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


def flags(s: ItemStats, human: Human | None, policy: FlagPolicy = DEFAULT_POLICY) -> list[str]:
    """The item's flags, each with its reason, most serious first."""
    out = []
    if s.n_models < 2:
        out.append(f"one model: answered with gold by {s.n_models} model; nothing estimated")
        return out + _human(human)
    if s.n_right == s.n_models:
        out.append(f"every model right ({s.n_models}): uninformative here")
    elif s.n_right == 0:
        out.append(f"every model wrong ({s.n_models}): uninformative here, or a wrong gold label")
    elif not s.shared_slope and math.isfinite(s.discrimination):
        interval = f"{s.discrimination:.2f} [{s.low:.2f}, {s.high:.2f}]"
        if s.discrimination < 0:
            sure = "clearly " if s.high < 0 else ""
            out.append(f"negative discrimination {interval}: {sure}the stronger models fail it more often "
                       "(a wrong gold label or an ambiguous item?)")
        elif s.discrimination < policy.near_zero:
            out.append(f"near-zero discrimination {interval}: it does not separate strong models from weak ones")
    worst = max(s.infit, s.outfit)
    if math.isfinite(worst) and worst > policy.misfit and 0 < s.n_right < s.n_models:
        out.append(f"misfit: infit {s.infit:.2f}, outfit {s.outfit:.2f} (mean-squares; about 1 expected)")
    return out + _human(human)


def _human(human: Human | None) -> list[str]:
    if human is None or human.verdict == "agrees":
        return []
    if human.verdict == "ties":
        return [f"humans tie: {human.preferred!r} is rated as high as the gold label"]
    return [f"humans disagree: they prefer {human.preferred!r} (the gold label is rated {-human.margin:.2f} lower)"]
