"""95% intervals of Spearman's ρ by a seeded percentile bootstrap over items.

Why a bootstrap over items and not Fisher z (with the Bonett–Wright SE): ExpliCa's points are
sentences, four per item (one per connective), sharing the item's two halves and the human
raters' reading of them. Fisher z treats the points as independent and would give too narrow
an interval; resampling whole items keeps each item's sentences together. The ranks are
heavily tied (ratings 1-10), so each resample is ranked with average ranks, exactly as
``scipy.stats.spearmanr`` would rank the resample written out.

A resample is a vector of item multiplicities; ranks and the correlation are computed as
weighted sums over the original points (a tie group's size in a resample is one matrix
product), so 2,000 resamples need no Python loop.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import NDArray

from lingdiag.metrics.stats import BOOTSTRAP_SAMPLES, correlatable, percentile_interval

SPEARMAN_BOOTSTRAP = (f"percentile bootstrap over items, an item's sentences resampled together "
                      f"({BOOTSTRAP_SAMPLES} resamples, seed 0)")
_CHUNK = 200
"""Resamples per vectorised step: bounds memory at _CHUNK × points floats."""


def weighted_ranks(values: NDArray[np.float64], item_of: NDArray[np.intp],
                   counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Average ranks of ``values`` in each resample, where item j appears ``counts[b, j]`` times.

    Args:
        values: One value per point, shape ``(n,)``.
        item_of: The item of each point, shape ``(n,)``, in ``0..m-1``.
        counts: Item multiplicities, shape ``(B, m)``.

    Returns:
        Shape ``(B, n)``: the (1-based, ties averaged) rank each point's copies get in resample b;
        a point absent from a resample gets a rank that its weight 0 then ignores.
    """
    from scipy.sparse import csr_matrix

    distinct, tie_group = np.unique(values, return_inverse=True)
    # Distinct value × item: sparse (an item has a few points), so the product costs B × points.
    per_value = csr_matrix((np.ones(len(values)), (tie_group, item_of)), shape=(len(distinct), counts.shape[1]))
    copies = np.asarray(per_value @ counts.T).T  # copies of each distinct value in each resample
    below = np.cumsum(copies, axis=1) - copies
    ranks: NDArray[np.float64] = (below + (copies + 1) / 2)[:, tie_group]
    return ranks


def weighted_spearman(x: NDArray[np.float64], y: NDArray[np.float64], item_of: NDArray[np.intp],
                      counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Spearman ρ of each resample (NaN where a side is constant in it); arguments as ``weighted_ranks``."""
    w = counts[:, item_of]
    rx, ry = weighted_ranks(x, item_of, counts), weighted_ranks(y, item_of, counts)
    total = w.sum(axis=1, keepdims=True)
    cx = rx - (w * rx).sum(axis=1, keepdims=True) / total
    cy = ry - (w * ry).sum(axis=1, keepdims=True) / total
    cov, vx, vy = (w * cx * cy).sum(axis=1), (w * cx * cx).sum(axis=1), (w * cy * cy).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: NDArray[np.float64] = np.where((vx > 0) & (vy > 0), cov / np.sqrt(vx * vy), np.nan)
    return out


def spearman_ci(xs: Sequence[float], ys: Sequence[float], items: Sequence[Hashable], *, seed: int = 0,
                samples: int = BOOTSTRAP_SAMPLES) -> list[float]:
    """Percentile bootstrap 95% interval of Spearman ρ, resampling items with all their points.

    Args:
        xs: First variable, one value per point.
        ys: Second variable.
        items: The item each point belongs to.
        seed: Seeds the resampling, so the interval repeats.
        samples: Resamples.

    Returns:
        ``[low, high]`` (unrounded); NaNs with fewer than 3 points or 2 items, or
        a constant side.
    """
    if not correlatable(xs, ys) or len(set(items)) < 2:
        return [math.nan, math.nan]
    index = {k: i for i, k in enumerate(dict.fromkeys(items))}
    item_of = np.array([index[k] for k in items])
    x, y, m = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), len(index)
    rng = np.random.default_rng(seed)
    rhos = []
    for start in range(0, samples, _CHUNK):
        size = min(_CHUNK, samples - start)
        draws = rng.integers(0, m, size=(size, m)) + m * np.arange(size)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * m).reshape(size, m).astype(float)
        rhos.append(weighted_spearman(x, y, item_of, counts))
    boots = np.concatenate(rhos)
    boots = boots[~np.isnan(boots)]
    if not len(boots):
        return [math.nan, math.nan]
    return list(percentile_interval(boots))
