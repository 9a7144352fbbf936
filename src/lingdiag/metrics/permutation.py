"""Paired permutation (sign-flip) test of a difference in a count metric between two sides.

Under the null hypothesis that A and B are exchangeable on each item, swapping an item's A
and B records leaves the distribution of the metric difference unchanged; the test swaps each
item with probability 1/2 and recomputes the difference. Exactly enumerated when the items
that differ between the sides are few (2^m ≤ the permutation budget), else drawn from a
seeded generator, so the p-value repeats.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from lingdiag.metrics.counts import CountMetric
from lingdiag.records import ItemRecord

PERMUTATIONS = 10_000
PERMUTATION = ("paired permutation over items (each item's A and B records swapped with probability 1/2), "
               "two-sided; exact enumeration when 2^m ≤ 10,000 (m = items whose counts differ), "
               "else 10,000 seeded draws with p = (k+1)/(R+1)")
_CHUNK = 500
"""Permutations per matrix product: bounds memory at _CHUNK × items floats."""
_TOL = 1e-12
"""Permuted differences this close to the observed one count as equally extreme (float noise)."""


@dataclass(frozen=True, slots=True)
class SignFlip:
    """The test's result."""

    a: float
    """The metric on side A."""
    b: float
    diff: float
    """``a - b``."""
    p: float
    """Two-sided; NaN where the metric is undefined on either side."""
    permutations: int
    """Permutations counted (``2^m`` when exact)."""
    exact: bool


def _flips(m: int, permutations: int, seed: int) -> tuple[Iterator[NDArray[np.float64]], bool]:
    if 2**m <= permutations:
        # Every sign pattern once, the identity included, so p = k / 2^m with no +1.
        codes = np.arange(2**m)[:, None]
        return iter([((codes >> np.arange(m)) & 1).astype(float)]), True
    rng = np.random.default_rng(seed)

    def draws() -> Iterator[NDArray[np.float64]]:
        for start in range(0, permutations, _CHUNK):
            yield rng.integers(0, 2, size=(min(_CHUNK, permutations - start), m)).astype(float)

    return draws(), False


def sign_flip(metric: CountMetric, a: Sequence[ItemRecord], b: Sequence[ItemRecord], *, seed: int = 0,
              permutations: int = PERMUTATIONS) -> SignFlip:
    """Paired permutation test of ``metric(a) - metric(b)``.

    Args:
        metric: The metric, as the suite computes it.
        a: Side A's records.
        b: Side B's records of the same items, in the same order.
        seed: Seeds the drawn permutations (unused when exact).
        permutations: Draws when the exact enumeration would be larger.

    Returns:
        The metric on each side, the difference and its p-value.
    """
    if len(a) != len(b):
        raise ValueError(f"sign_flip needs the same items on both sides (got {len(a)} and {len(b)} records)")
    fa, fb = metric.matrix(a), metric.matrix(b)
    sum_a, sum_b = fa.sum(axis=0), fb.sum(axis=0)
    va, vb = float(metric.combine(sum_a)), float(metric.combine(sum_b))
    diff = va - vb
    if math.isnan(diff):
        return SignFlip(va, vb, diff, math.nan, 0, False)
    d = fa - fb
    d = d[np.any(d != 0, axis=1)]  # an item with equal counts on both sides moves nothing when swapped
    flips, exact = _flips(len(d), permutations, seed)
    hits = total = 0
    for f in flips:
        moved = f @ d  # what the swapped items take from A and give to B
        stats = metric.combine(sum_a - moved) - metric.combine(sum_b + moved)
        hits += int(np.sum(np.abs(stats) >= abs(diff) - _TOL))  # NaN compares False: not as extreme
        total += len(f)
    p = hits / total if exact else (hits + 1) / (total + 1)
    return SignFlip(va, vb, diff, p, total, exact)
