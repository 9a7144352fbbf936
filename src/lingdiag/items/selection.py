"""Choosing anchor items and a model's full-cell accuracy from its answers to them alone, as
tinyBenchmarks does (Polo et al., 2024): fit the item model on the models already run, cluster
the items by their parameters, keep the items nearest each cluster's centre as anchors (as many
per cluster as its share of the items gives) weighted by that share; a new model's ability is
estimated from the anchors alone (the item parameters fixed) and its accuracy predicted on every item it was not asked
(the *p-IRT* estimate: the anchors' own answers plus each other item's predicted probability).

The stated interval is the posterior of the accuracy under the item model (the ability's posterior
on a fine grid under the fitted models' ``N(0, 1)``, which pulls a model stronger or weaker than every
fitted one towards them: docs/items.md states by how much; each unasked item's Bernoulli noise), its
2.5% and 97.5% quantiles; where the error measured by leaving each fitted model out in
turn (:func:`lingdiag.items.validate.leave_one_out`, recorded with the anchors) is larger than the
posterior's spread, the interval is widened about the estimate to that error, its quantile Student's t
on as many degrees of freedom as models were left out (the error is a root-mean-square of that few; the
measured error already holds the model's own noise: the two are not added). A model right (wrong) on every anchor
answered has the interval reach 1 (0): nothing in its answers bounds it below perfect.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.cluster.vq import kmeans2
from scipy.special import expit
from scipy.stats import norm
from scipy.stats import t as student_t

from lingdiag.errors import LingdiagError
from lingdiag.items.irt import Z95, Array, Estimates, grid


class NoEstimate(LingdiagError):
    """The run's answers cannot give an estimate (no anchor answered, another suite...)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """The anchors of one cell: positions in the fitted items and weights (summing to 1)."""

    index: NDArray[np.int64]
    weight: Array


def choose(est: Estimates, k: int, seed: int = 0) -> Chosen:
    """``k`` anchors of a fitted cell: k-means over each item's standardised (slope, intercept), then
    ``k`` items shared among the clusters by their size (largest remainders; :func:`allocate`), in each
    cluster the items nearest its centre, each weighted by its cluster's share over its anchors there (a
    cluster too small for an anchor adds its share to the nearest cluster with anchors).

    Where the items have fewer distinct parameters than ``k`` (a 1PL over a few models gives one per count
    of models right), the clusters are those distinct points and each holds several anchors: one item per
    cluster would ask 26 of the 100 anchors asked for, and the estimate would rest on 26 answers.

    Args:
        est: The cell's fit.
        k: Anchors wanted (all items where the cell has no more).
        seed: The k-means seed, and the order in which items at one distance from their centre are taken.
    """
    n = len(est.slope)
    if k >= n:
        return Chosen(np.arange(n), np.full(n, 1.0 / n))
    points = np.column_stack([est.slope, est.intercept])
    sd = points.std(0)
    points = (points - points.mean(0)) / np.where(sd > 0, sd, 1.0)
    # Items of one pattern (every model wrong...) share their parameters: k-means runs on the distinct
    # points, so that a heap of duplicates neither stalls its seeding nor empties a cluster's seed.
    distinct = np.unique(points, axis=0)
    if len(distinct) <= k:
        centres = distinct
    else:
        with warnings.catch_warnings():  # an emptied cluster only means its anchors go to the others
            warnings.filterwarnings("ignore", "One of the clusters is empty", UserWarning)
            centres, _ = kmeans2(distinct, k, seed=seed, minit="++")
    label = np.argmin(((points[:, None, :] - centres[None, :, :]) ** 2).sum(2), axis=1)
    size = np.bincount(label, minlength=len(centres))
    count = allocate(size, k)
    # A cluster too small for an anchor of its own is carried by the nearest one that has anchors.
    kept = np.flatnonzero(count > 0)
    carried = kept[np.argmin(((centres[:, None, :] - centres[None, kept, :]) ** 2).sum(2), axis=1)]
    carried_size = np.bincount(carried[label], minlength=len(centres))
    # Items at one distance from a centre (duplicates) are taken in a seeded order, not by position:
    # an item's position follows the dataset's order, which may follow its kind.
    tie = np.random.default_rng(seed).permutation(n)
    index, weight = [], []
    for c in kept:
        m = int(count[c])
        members = np.flatnonzero(label == c)
        distance = ((points[members] - centres[c]) ** 2).sum(1)
        index += [int(j) for j in members[np.lexsort((tie[members], distance))[:m]]]
        weight += [carried_size[c] / n / m] * m
    return Chosen(np.asarray(index, dtype=np.int64), np.asarray(weight))


def allocate(size: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """``k`` draws shared among groups of ``size`` items in proportion to their size, by largest
    remainders (ties to the earlier group), none given more than it holds.
    """
    quota = size / size.sum() * k
    out: NDArray[np.int64] = np.minimum(np.floor(quota).astype(np.int64), size)
    while out.sum() < min(k, size.sum()):
        gain = np.where(out < size, quota - out, -np.inf)
        out[int(np.argmax(gain))] += 1
    return out


@dataclass(frozen=True, slots=True)
class Estimate:
    """A full-cell accuracy estimated from the anchors, with its 95% interval."""

    estimate: float
    low: float
    high: float
    anchors_answered: int
    items: int
    """Items of the cell the estimate covers."""
    ability: float
    model_sd: float
    """The standard deviation the item model implies."""
    measured_error: float | None
    """The leave-one-model-out root-mean-square error the interval is widened to (None: not measured)."""
    basis: str = ""
    """What the interval is made of, in words."""
    bias: str = ""
    """The estimate's known bias, in words (the IRT estimate's pull towards the fitted models)."""


ESTIMATE_PRIOR_SD = 1.0
"""The prior of a new model's ability in :func:`estimate`: the fitted models' N(0, 1). A wider one (2) took
the IRT anchors' leave-one-model-out error above random items' on a 12-model panel: the shrinkage towards
the fitted models costs the extreme ones (stated in docs/items.md) and gains the rest."""

SHRINKAGE = ("pulled towards the fitted models: on synthetic panels of 10, 30 and 100 models a new model more than "
             "1.5 SD above their mean ability was estimated 5.6-6.2 points low on average, one more than 1.5 SD "
             "below 5.4-7.7 points high, one within 1 SD within a point (docs/items.md)")
"""The bias of the IRT estimate, as every estimate states it (measured: ``bench/items_coverage.py``)."""


def estimate(slope: Array, intercept: Array, anchors: Chosen, answers: Mapping[int, bool],
             measured_error: float | None = None, nodes: int = 241, measured_on: int = 0) -> Estimate:
    """The accuracy over every fitted item of a model that answered ``answers`` (anchor position →
    right) of the anchors, with its interval (see the module's text); ``measured_on``: the models the
    measured error is the root-mean-square of (its quantile is Student's t on that many degrees of freedom;
    0: the normal's).

    Raises:
        NoEstimate: no anchor answered.
    """
    asked = np.asarray([j for j in anchors.index if int(j) in answers], dtype=np.int64)
    if asked.size == 0:
        raise NoEstimate("the run answered none of the anchors (with gold); nothing to estimate from")
    x = np.asarray([float(answers[int(j)]) for j in asked])
    theta = grid(nodes)[0] * ESTIMATE_PRIOR_SD
    weights = np.exp(-0.5 * (theta / ESTIMATE_PRIOR_SD) ** 2)
    z = np.outer(theta, slope[asked]) + intercept[asked]
    loglik = (x * -np.logaddexp(0, -z) + (1 - x) * -np.logaddexp(0, z)).sum(1)
    post = np.exp(loglik - loglik.max()) * weights
    post /= post.sum()
    rest = np.ones(len(slope), dtype=bool)
    rest[asked] = False
    n = len(slope)
    mean_q, var_q = np.full(nodes, x.sum() / n), np.zeros(nodes)
    for start in range(0, nodes, 64):  # nodes × unasked items, a block of nodes at a time
        p = expit(np.outer(theta[start:start + 64], slope[rest]) + intercept[rest])
        mean_q[start:start + 64] += p.sum(1) / n
        var_q[start:start + 64] = (p * (1 - p)).sum(1) / n**2
    mean = float(post @ mean_q)
    sd = math.sqrt(float(post @ var_q + post @ (mean_q - mean) ** 2))
    low, high = _mixture_quantiles(post, mean_q, np.sqrt(var_q))
    basis = "the item model's posterior"
    # The measured error is a root-mean-square over a few held-out models: its 95% bound is Student's t on
    # that many degrees of freedom, not the normal's 1.96 (2.23 for 10 models).
    scaled = None if measured_error is None else \
        measured_error * (float(student_t.ppf(0.975, measured_on)) / Z95 if measured_on > 0 else 1.0)
    if scaled is not None and scaled > sd > 0:
        widen = scaled / sd
        low, high = mean - widen * (mean - low), mean + widen * (high - mean)
        basis += (f", widened to the error measured by leaving models out ({measured_error:.3f}"
                  f"{f', t on {measured_on} models' if measured_on else ''})")
    if x.all():
        high, basis = 1.0, basis + "; every anchor answered right: the interval reaches 1"
    elif not x.any():
        low, basis = 0.0, basis + "; every anchor answered wrong: the interval reaches 0"
    ability = float(post @ theta)
    side = "above" if ability > 0 else "below"
    bias = SHRINKAGE if abs(ability) <= 1.0 else \
        f"likely {'under' if ability > 0 else 'over'}estimated: its ability ({ability:+.2f}) is {side} most fitted " \
        f"models'; {SHRINKAGE}"
    return Estimate(mean, max(0.0, low), min(1.0, high), int(asked.size), n, ability, sd, measured_error, basis, bias)


def _mixture_quantiles(weight: Array, mean: Array, sd: Array) -> tuple[float, float]:
    """The 2.5% and 97.5% quantiles of a mixture of normals (weights summing to 1)."""
    keep = weight > 1e-9
    w, m, s = weight[keep], mean[keep], np.maximum(sd[keep], 1e-9)
    at = np.linspace(max(0.0, float((m - 5 * s).min())), min(1.0, float((m + 5 * s).max())), 801)
    cdf = norm.cdf((at[:, None] - m[None, :]) / s[None, :]) @ w
    cdf = cdf / cdf[-1] if cdf[-1] > 0 else cdf
    return float(np.interp(0.025, cdf, at)), float(np.interp(0.975, cdf, at))


def at_random(n: int, k: int, seed: int = 0) -> Chosen:
    """``k`` of ``n`` items drawn uniformly (seeded), equally weighted: the baseline the anchors must beat."""
    k = min(k, n)
    index = np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False)).astype(np.int64)
    return Chosen(index, np.full(k, 1.0 / k))


def sample_error(p: float, n: int, k: int) -> float:
    """The standard error of the share right in ``k`` of ``n`` items drawn at random (hypergeometric)."""
    k = min(k, n)
    return math.sqrt(p * (1 - p) / k * ((n - k) / (n - 1))) if n > 1 and k > 0 else 0.0


def sample_estimate(n: int, anchors: Chosen, answers: Mapping[int, bool]) -> Estimate:
    """The plain share right among the answered random anchors, with its sampling interval.

    Raises:
        NoEstimate: no anchor answered.
    """
    got = [answers[int(j)] for j in anchors.index if int(j) in answers]
    if not got:
        raise NoEstimate("the run answered none of the anchors (with gold); nothing to estimate from")
    p = sum(got) / len(got)
    se = sample_error(p, n, len(got))
    # Wilson's score interval (with the finite-population correction): it reaches 1 where every answer is
    # right instead of shrinking to the point, as p ± z·SE would.
    k, fpc = len(got), (n - len(got)) / (n - 1) if n > 1 else 0.0
    z2 = Z95**2 * fpc
    centre = (p + z2 / (2 * k)) / (1 + z2 / k)
    half = math.sqrt(z2 * (p * (1 - p) / k + z2 / (4 * k * k))) / (1 + z2 / k)
    return Estimate(p, max(0.0, centre - half), min(1.0, centre + half), k, n, math.nan, se, None,
                    "random items' sampling error (Wilson's interval, finite population)",
                    "none known: the share right of items drawn at random")
