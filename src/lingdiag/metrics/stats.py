"""The statistics every suite and analysis shares, each in one place.

- Correlation (:func:`pearson`, :func:`spearman`) behind one small-sample guard
  (:func:`correlatable`): with fewer than 3 pairs or a constant side r and ρ are undefined,
  and scipy would only warn, so every caller gets None instead.
- The seeded percentile bootstrap: :func:`resampled_means` draws ``samples`` resamples of
  the items, :func:`percentile_interval` reads the 95% interval off them,
  :func:`difference_ci` is the interval of a difference of two independent proportions, and
  :func:`paired_difference_ci` that of a paired difference of two accuracies.
  (ExpliCa's item-clustered Spearman interval is :mod:`lingdiag.metrics.correlation`.)
- Holm's step-down correction (statsmodels' ``multipletests``): :func:`holm` over p-values,
  :func:`holm_rows` over any table of tested rows that carry ``p`` and ``p_holm``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from lingdiag.errors import MissingDependency

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

BOOTSTRAP_SAMPLES = 2000
"""Resamples of every bootstrap interval."""
MIN_PAIRS = 3
"""Fewest pairs a correlation is computed on."""


def correlatable(xs: Sequence[float], ys: Sequence[float]) -> bool:
    """Whether a correlation of ``xs`` and ``ys`` is defined: at least 3 pairs, neither side constant."""
    return len(xs) >= MIN_PAIRS and len(set(xs)) > 1 and len(set(ys)) > 1


@dataclass(frozen=True, slots=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value."""

    r: float
    """Pearson r or Spearman ρ."""
    p: float
    """Two-sided p-value (scipy)."""
    n: int
    """Number of pairs."""
    ci95: tuple[float, float] | None = None
    """Pearson: the Fisher z 95% interval (``pearsonr(...).confidence_interval()``; with 3
    points it is [-1, 1], no information). Spearman: None (see :mod:`.correlation` for the
    item bootstrap)."""


def pearson(xs: Sequence[float], ys: Sequence[float]) -> Correlation | None:
    """Pearson r, its p-value and Fisher z interval; None where :func:`correlatable` fails."""
    if not correlatable(xs, ys):
        return None
    from scipy.stats import pearsonr

    res = pearsonr(xs, ys)
    ci = res.confidence_interval(0.95)
    return Correlation(float(res.statistic), float(res.pvalue), len(xs), (float(ci.low), float(ci.high)))


def spearman(xs: Sequence[float], ys: Sequence[float]) -> Correlation | None:
    """Spearman ρ and its p-value; None where :func:`correlatable` fails."""
    if not correlatable(xs, ys):
        return None
    from scipy.stats import spearmanr

    res = spearmanr(xs, ys)
    return Correlation(float(res.statistic), float(res.pvalue), len(xs))


def resampled_means(values: NDArray[np.float64], rng: np.random.Generator,
                    samples: int = BOOTSTRAP_SAMPLES) -> NDArray[np.float64]:
    """The means of ``samples`` resamples (with replacement) of ``values``, drawn from ``rng``."""
    means: NDArray[np.float64] = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    return means


def percentile_interval(boots: NDArray[np.float64]) -> tuple[float, float]:
    """The percentile 95% interval of bootstrap statistics, unrounded (whoever shows it rounds it once)."""
    import numpy as np

    low, high = (float(x) for x in np.percentile(boots, [2.5, 97.5]))
    return low, high


def paired_difference_ci(only_a: int, only_b: int, n: int, rng: np.random.Generator,
                         samples: int = BOOTSTRAP_SAMPLES) -> tuple[float, float]:
    """The percentile 95% interval of ``acc_a - acc_b`` over ``n`` paired items, by the paired bootstrap.

    A resample of the items is known by how many of its items only A got right and how many only B
    (``only_a`` and ``only_b`` of the ``n``): a multinomial draw, so each resample costs three numbers, not
    ``n`` indices (the same distribution as resampling the items; 100,000 items take a millisecond).
    """
    counts = rng.multinomial(n, [only_a / n, only_b / n, max(1 - (only_a + only_b) / n, 0.0)], size=samples)
    return percentile_interval((counts[:, 0] - counts[:, 1]) / n)


def difference_ci(a: Sequence[bool], b: Sequence[bool], seed: int = 0) -> list[float]:
    """Bootstrap 95% interval of ``mean(a) - mean(b)`` for two independent sets of items.

    Each side is resampled on its own (the items of two groups are different items), with a
    seeded generator so the interval repeats byte for byte.
    """
    import numpy as np

    if not a or not b:
        return [math.nan, math.nan]
    rng = np.random.default_rng(seed)
    means_a = resampled_means(np.asarray(a, dtype=float), rng)
    means_b = resampled_means(np.asarray(b, dtype=float), rng)
    return list(percentile_interval(means_a - means_b))


def percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a whole percent rounded from the exact fraction, half up (23 of 40 is ``58%``; the
    float 0.575 is 0.57499... and ``f"{0.575:.0%}"`` prints 57%). Shares of one row summing to 100 take
    :func:`whole_percents`.
    """
    return f"{(200 * part + whole) // (2 * whole)}%" if whole > 0 else "–"


def whole_percents(counts: Sequence[int]) -> list[int]:
    """Each count's share of their total in whole percents that sum to 100: the largest-remainder rule on
    exact integers (each share is its exact percentage rounded down, and the points left go to the largest
    remainders, a larger count first on a tie). 23 of 40 is 58%, never 57% from a float that reads 0.575 as
    0.57499..., and a row never sums to 99% or 101%. Empty (or all zero) counts give zeros.
    """
    total = sum(counts)
    if total <= 0:
        return [0] * len(counts)
    floors = [c * 100 // total for c in counts]
    left = 100 - sum(floors)
    ranked = sorted(range(len(counts)), key=lambda k: (-(counts[k] * 100 % total), -counts[k], k))
    for k in ranked[:left]:
        floors[k] += 1
    return floors


def holm(pvalues: Iterable[float]) -> list[float]:
    """Holm-adjusted p-values of one family, in input order (statsmodels ``multipletests``).

    Raises:
        MissingDependency: statsmodels (the ``stats`` extra) is not installed.
    """
    ps = list(pvalues)
    if not ps:
        return []
    try:
        from statsmodels.stats.multitest import multipletests
    except ModuleNotFoundError:
        raise MissingDependency("Holm's correction", "stats", ["statsmodels"]) from None
    return [float(q) for q in multipletests(ps, method="holm")[1]]


class Tested(Protocol):
    """A row of a table of tests: a dataclass with a p-value and a Holm-adjusted one."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def p(self) -> float:
        """The unadjusted p-value."""

    @property
    def p_holm(self) -> float:
        """The Holm-adjusted p-value (set by :func:`holm_rows`)."""


Row = TypeVar("Row", bound=Tested)


def holm_rows(rows: Sequence[Row]) -> list[Row]:
    """``rows`` with ``p_holm`` set by Holm's correction over all of them (one family)."""
    return [replace(r, p_holm=q) for r, q in zip(rows, holm(r.p for r in rows), strict=True)]
