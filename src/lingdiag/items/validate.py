"""How far an anchors-only estimate falls from a model's real accuracy, measured by leaving each
model out in turn: fit the item model on the others, choose the anchors from that fit, estimate the
left-out model's accuracy from its answers to the anchors, and compare it with its accuracy on every
item; beside it, the error of ``k`` items drawn at random (the exact hypergeometric standard error
of a sample of ``k`` of the model's graded items, and its mean absolute error ``SE·√(2/π)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lingdiag.items import irt
from lingdiag.items.matrix import ResponseMatrix
from lingdiag.items.selection import at_random, choose, estimate, sample_error, sample_estimate


@dataclass(frozen=True, slots=True)
class HeldOut:
    """One model left out: its real accuracy, the estimate and the random-items error."""

    model: str
    accuracy: float
    estimate: float
    low: float
    high: float
    random_se: float
    """The standard error of the accuracy of ``k`` random items of the model's graded ones."""

    @property
    def error(self) -> float:
        """Estimate − accuracy."""
        return self.estimate - self.accuracy

    @property
    def random_mae(self) -> float:
        """The mean absolute error of ``k`` random items."""
        return self.random_se * math.sqrt(2 / math.pi)

    @property
    def covered(self) -> bool:
        """Whether the interval holds the real accuracy."""
        return self.low <= self.accuracy <= self.high


def leave_one_out(m: ResponseMatrix, k: int, kind: irt.Kind = "2pl", priors: irt.Priors = irt.DEFAULT_PRIORS,
                  seed: int = 0, measured_error: float | None = None, models: Sequence[int] | None = None,
                  method: str = "irt") -> list[HeldOut]:
    """Each model of ``m`` left out in turn (see the module's text).

    Args:
        m: The cell.
        k: Anchors per fit.
        kind: The item model.
        priors: Its priors.
        seed: The anchors' k-means seed.
        measured_error: Added to each interval (None: the model's spread alone).
        models: The positions of the models to leave out (default: every one).
        method: ``irt`` (the anchors and p-IRT estimate) or ``random`` (``k`` items at random, their mean).
    """
    out = []
    for held in range(len(m.models)) if models is None else models:
        rest = m.without(held)
        graded = rest.observed.any(0)
        fitted = irt.fit(np.ascontiguousarray(rest.responses[:, graded]), kind, priors, errors=False)
        items = np.flatnonzero(graded)
        chosen = choose(fitted, k, seed) if method == "irt" else at_random(len(items), k, seed + held)
        row = m.responses[held]
        answers = {int(j): bool(row[items[j]] == 1) for j in chosen.index if row[items[j]] >= 0}
        est = estimate(fitted.slope, fitted.intercept, chosen, answers, measured_error) if method == "irt" else \
            sample_estimate(len(items), chosen, answers)
        own = row[row >= 0]
        acc = float((own == 1).mean())
        out.append(HeldOut(m.models[held], acc, est.estimate, est.low, est.high, sample_error(acc, own.size, k)))
    return out


def random_rms(held: list[HeldOut]) -> float:
    """The root-mean-square standard error of ``k`` random items over the held-out models (the baseline)."""
    return math.sqrt(sum(h.random_se**2 for h in held) / len(held)) if held else math.nan


def rms(errors: list[HeldOut]) -> float:
    """The root-mean-square error of the estimates."""
    return math.sqrt(sum(h.error**2 for h in errors) / len(errors)) if errors else math.nan
