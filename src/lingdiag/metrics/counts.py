"""Metrics that are a function of per-item counts summed over items (rates, accuracies, gaps, F1).

Written this way, a metric is computed once per condition by ``metrics()`` and thousands of
times by a paired permutation test (``lingdiag compare``) from the same definition: the test
swaps items' count rows between the two sides and re-applies ``combine`` to the new sums,
which numpy does for all permutations at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from lingdiag.records import ItemRecord

Sums = NDArray[np.float64]
"""Count sums, shape ``(..., k)``: one column per count a metric reads."""


@dataclass(frozen=True, slots=True)
class CountMetric:
    """A metric equal to ``combine(sum over items of counts(item))``."""

    counts: Callable[[ItemRecord], Sequence[float]]
    """The item's ``k`` counts, e.g. (in group C and answered True, in group C)."""
    combine: Callable[[Sums], NDArray[np.float64]]
    """Sums ``(..., k)`` → metric values ``(...)``; NaN where a denominator is 0."""
    width: int
    """``k``, the number of counts per item."""

    def matrix(self, records: Sequence[ItemRecord]) -> NDArray[np.float64]:
        """The ``(n, k)`` counts of ``records``."""
        return np.array([list(self.counts(r)) for r in records], dtype=float).reshape(len(records), self.width)

    def __call__(self, records: Sequence[ItemRecord]) -> float:
        """The metric of ``records``."""
        return float(self.combine(self.matrix(records).sum(axis=0)))


def ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """``num / den``, NaN where ``den`` is 0 (an empty group has no rate), without a warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: NDArray[np.float64] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def share(within: Callable[[ItemRecord], bool], hit: Callable[[ItemRecord], bool]) -> CountMetric:
    """The share of the items ``within`` a subset for which ``hit`` holds (NaN on an empty subset)."""
    return CountMetric(lambda r: (float(within(r) and hit(r)), float(within(r))),
                       lambda s: ratio(s[..., 0], s[..., 1]), 2)
