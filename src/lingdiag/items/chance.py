"""Flags tested against chance: what answers drawn from the fitted model itself — every item
separating the models the right way round — give, on this study's models and items.

With 8 models an item's answers are 8 coin flips, and a few hundred items give dozens whose answers
fall as ability rises by chance alone (on ExpliCa's 8 models, as many as items that separate
correctly would give). So each flag is a statistic tested against a **parametric bootstrap**: answers
are drawn ``draws`` times from the fitted model at the models' fitted abilities (an item's slope taken
as its absolute value, so every item separates correctly; the missing answers kept missing), the
statistic is computed on each draw, and

- the **expected number by chance** of items meeting the raw rule (and the share of draws with as
  many as observed) stands beside the observed number;
- each item's **p-value** is the share of null statistics, standardised by the item's own null mean
  and spread and pooled over items and draws, at least as extreme as its own; the **q-value**
  controls the false-discovery rate over the cell's tested items (Benjamini–Hochberg), and an item
  is flagged only where ``q ≤`` the policy's rate.

The statistics: **separation**, the correlation of an item's answers with the models' abilities
(negative: the stronger models fail it more often, a reversed item or a wrong gold label); and
**misfit**, the larger of the item's infit and outfit mean-squares.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from lingdiag.items.irt import Array


@dataclass(frozen=True, slots=True)
class Test:
    """One flag's statistic over a cell's items, tested against the bootstrap."""

    observed: int
    """Items meeting the raw rule (a negative separation; a mean-square above the bound)."""
    expected: float
    """The mean number of items meeting it in the draws."""
    as_many: float
    """The share of draws with at least :attr:`observed` such items."""
    p: Array
    """Each item's p-value (NaN: not tested, e.g. every model right)."""
    q: Array
    """Benjamini–Hochberg adjusted p-values."""

    def flagged(self, fdr: float) -> NDArray[np.bool_]:
        """The items beyond chance at the false-discovery rate ``fdr``."""
        return np.asarray(np.nan_to_num(self.q, nan=2.0) <= fdr)

    def verdict(self, fdr: float) -> str:
        """``no evidence`` or how many are beyond chance."""
        k = int(self.flagged(fdr).sum())
        if k:
            return f"{k} beyond chance at a false-discovery rate of {fdr:.0%}"
        return "no evidence beyond chance" if self.as_many > 0.05 else \
            f"more than chance gives (in {self.as_many:.0%} of draws), but no single item beyond it at a " \
            f"false-discovery rate of {fdr:.0%}"


@dataclass(frozen=True, slots=True)
class Chance:
    """The cell's flags against chance."""

    draws: int
    seed: int
    separation: Array
    """Each item's correlation of its answers with the models' abilities (NaN: constant answers)."""
    reversed: Test
    misfit: Test


def separation(responses: NDArray[np.int8], ability: Array) -> Array:
    """Each item's correlation between its graded answers and the answering models' abilities."""
    graded = (responses >= 0).astype(np.float64)
    return _correlation((responses == 1).astype(np.float64), graded, ability)


def _correlation(x: Array, graded: Array, theta: Array) -> Array:
    n = graded.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mx = (x * graded).sum(0) / n
        mt = (graded * theta[:, None]).sum(0) / n
        dx = (x - mx) * graded
        dt = (theta[:, None] - mt) * graded
        cov = (dx * dt).sum(0)
        out = cov / np.sqrt((dx**2).sum(0) * (dt**2).sum(0))
    return np.asarray(np.where(n >= 3, out, np.nan))


def _misfit(x: Array, graded: Array, p: Array) -> Array:
    var = p * (1 - p)
    sq = ((x - p) ** 2) * graded
    with np.errstate(divide="ignore", invalid="ignore"):
        outfit = (sq / var).sum(0) / graded.sum(0)
        infit = sq.sum(0) / (var * graded).sum(0)
    return np.asarray(np.maximum(infit, outfit))


def _bh(p: Array) -> Array:
    """Benjamini–Hochberg adjusted p-values over the finite entries of ``p``."""
    q = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return q
    order = ok[np.argsort(p[ok], kind="stable")]
    ranked = p[order] * ok.size / np.arange(1, ok.size + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    return q


def _pooled(observed: Array, null: Array, lower: bool) -> Array:
    """Each item's p-value against the null draws (draws × items) standardised per item and pooled."""
    with warnings.catch_warnings():  # an item never tested in any draw (every model right) has no null
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, sd = np.nanmean(null, 0), np.nanstd(null, 0)
    usable = np.isfinite(observed) & (sd > 0)
    z = np.where(usable, (observed - mean) / np.where(sd > 0, sd, 1.0), np.nan)
    pool = ((null[:, usable] - mean[usable]) / sd[usable]).ravel()
    pool = np.sort(pool[np.isfinite(pool)])
    if pool.size == 0:
        return np.full_like(observed, np.nan)
    at = np.searchsorted(pool, z, side="right") if lower else pool.size - np.searchsorted(pool, z, side="left")
    return np.asarray(np.where(usable, (1 + at) / (1 + pool.size), np.nan))


def _test(observed: Array, null: Array, rule_observed: NDArray[np.bool_], rule_null: NDArray[np.bool_],
          lower: bool) -> Test:
    counts = rule_null.sum(1)
    seen = int(rule_observed.sum())
    p = _pooled(observed, null, lower)
    return Test(seen, float(counts.mean()), float((counts >= seen).mean()), p, _bh(p))


def against_chance(responses: NDArray[np.int8], slope: Array, intercept: Array, ability: Array,
                   misfit_bound: float, draws: int = 100, seed: int = 0) -> Chance:
    """The cell's flags tested against ``draws`` answers drawn from the fitted model (see the module's text).

    Args:
        responses: Models × items, 1 right, 0 wrong, −1 missing (items not fitted have NaN parameters).
        slope: Each item's slope (its absolute value is used: items that separate correctly).
        intercept: Each item's intercept.
        ability: Each model's fitted ability.
        misfit_bound: The mean-square above which an item misfits.
        draws: Bootstrap draws.
        seed: Their seed.
    """
    graded = (responses >= 0).astype(np.float64)
    x = (responses == 1).astype(np.float64)
    right, n = x.sum(0), graded.sum(0)
    informative = (n >= 2) & (right > 0) & (right < n) & np.isfinite(slope)
    a, c = np.where(np.isfinite(slope), slope, 0.0), np.where(np.isfinite(intercept), intercept, 0.0)
    p = 1 / (1 + np.exp(-(ability[:, None] * a[None, :] + c[None, :])))
    p_null = 1 / (1 + np.exp(-(ability[:, None] * np.abs(a)[None, :] + c[None, :])))
    sep = np.where(informative, _correlation(x, graded, ability), np.nan)
    fit = np.where(informative, _misfit(x, graded, p), np.nan)
    rng = np.random.default_rng(seed)
    null_sep = np.empty((draws, len(a)))
    null_fit = np.empty((draws, len(a)))
    null_informative = np.empty((draws, len(a)), dtype=bool)
    for b in range(draws):
        xs = (rng.random(p.shape) < p_null) * graded
        rs = xs.sum(0)
        null_informative[b] = (n >= 2) & (rs > 0) & (rs < n) & np.isfinite(slope)
        null_sep[b] = np.where(null_informative[b], _correlation(xs, graded, ability), np.nan)
        null_fit[b] = np.where(null_informative[b], _misfit(xs, graded, p_null), np.nan)
    with np.errstate(invalid="ignore"):
        rev = _test(sep, null_sep, informative & (sep < 0), null_informative & (null_sep < 0), lower=True)
        mis = _test(fit, null_fit, informative & (fit > misfit_bound), null_informative & (null_fit > misfit_bound),
                    lower=False)
    return Chance(draws, seed, sep, rev, mis)


def count_line(what: str, t: Test, n_models: int, fdr: float) -> str:
    """``57 items whose answers fall as ability rises; about 56 expected by chance with 8 models: no evidence…``"""
    expected = f"{t.expected:.0f}" if t.expected >= 10 else f"{t.expected:.1f}"
    return (f"{t.observed} {'item' if t.observed == 1 else 'items'} {what}; about {expected} expected by chance "
            f"with {n_models} models: {t.verdict(fdr)}")


def finite(x: float) -> float | None:
    """``x``, or None where it is not finite (JSON holds no NaN)."""
    return x if math.isfinite(x) else None
