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
  model wrong says what the humans think of the gold where the suite has ratings, and, where every model
  is weak on the item's family (:func:`weak_family`), that the models' weakness explains it as well as a
  wrong gold label would;
- **one model**: answered (with gold) by one model only, so nothing is estimated for it;
- **humans disagree / humans tie**: another label has a higher (or the same) mean human rating.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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
    weak: Family | None = None
    """Its family, where every model is weak on it (None: not)."""


@dataclass(frozen=True, slots=True)
class Family:
    """A family of items every model is weak on."""

    name: str
    """``tag=value`` (empty: the item's cell)."""
    best: float
    """The best model's accuracy on the family's graded items."""
    expected: float
    """Items of the family every model would get wrong by the models' accuracies on it alone."""
    items: int

    def line(self) -> str:
        """What the flag says of the family."""
        where = f"its family ({self.name})" if self.name else "this suite and condition"
        return (f"every model is weak on {where}: the best is right on {self.best:.0%} of its {self.items} items, "
                f"and about {self.expected:.1f} items every model gets wrong are expected from those accuracies "
                "alone: the models' weakness as likely as a wrong gold label")


WEAK_EXPECTED = 1.0
"""A family is weak for every model when the models' accuracies on it make at least this many items every
model gets wrong expected (Σ over its items of Π over the models answering it of 1 − their accuracy on the
family): an item all of them miss is then what their weakness gives, not evidence against the gold."""


def weak_family(name: str, responses: np.ndarray) -> Family | None:
    """The family whose answers (models × its items: 1, 0, −1 missing) are ``responses``, if every model is
    weak on it (:data:`WEAK_EXPECTED`); None otherwise, or where no model answered it.
    """
    graded = responses >= 0
    answered = graded.sum(1)
    if not answered.any():
        return None
    accuracy = np.divide((responses == 1).sum(1), answered, out=np.zeros(len(answered)), where=answered > 0)
    miss = np.where(graded, (1 - accuracy)[:, None], 1.0)
    expected = float(np.prod(miss, axis=0)[graded.any(0)].sum())
    if expected < WEAK_EXPECTED:
        return None
    return Family(name, float(accuracy[answered > 0].max()), expected, int(graded.any(0).sum()))


def flags(s: ItemStats, human: Human | None, policy: FlagPolicy = DEFAULT_POLICY) -> list[str]:
    """The item's flags, each with its reason, most serious first."""
    out = []
    if s.n_models < 2:
        out.append(f"one model: answered with gold by {s.n_models} model; nothing estimated")
        return out + _human(human)
    if s.n_right == s.n_models:
        out.append(f"every model right ({s.n_models}): uninformative here")
    elif s.n_right == 0:
        out.append(f"every model wrong ({s.n_models}): " + _all_wrong(human, s.weak))
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


def _all_wrong(human: Human | None, weak: Family | None) -> str:
    if human is None:
        return weak.line() + " (no human ratings to tell)" if weak is not None else \
            "uninformative here, or a wrong gold label (no human ratings to tell)"
    if human.verdict == "agrees":
        said = f"the humans agree with the gold (by {human.margin:.2f}): the models' weakness, not the label"
        return said if weak is None else f"{said}; {weak.line().split(':')[0]}"
    said = f"the humans prefer {human.preferred!r}: check the gold label"
    return said if weak is None else f"{said} ({weak.line().split(':')[0]})"


def _human(human: Human | None) -> list[str]:
    if human is None or human.verdict == "agrees":
        return []
    if human.verdict == "ties":
        return [f"humans tie: {human.preferred!r} is rated as high as the gold label"]
    return [f"humans disagree: they prefer {human.preferred!r} (the gold label is rated {-human.margin:.2f} lower)"]
