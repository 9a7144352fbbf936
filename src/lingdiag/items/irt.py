"""Item response models fitted by marginal maximum likelihood: Bock and Aitkin's EM over a grid
quadrature of the ability distribution, every item at once (numpy), the items taken in blocks so
that memory grows with the items × quadrature points of one block, never of the whole matrix.

The model: a model ``m`` of ability ``θ`` answers item ``j`` right with probability
``σ(a_j θ + c_j)``; ``θ ~ N(0, 1)`` over the models fixes the scale. The **2PL** fits a slope
``a_j`` (discrimination) and an intercept ``c_j`` per item; the **1PL** one slope shared by all
items. The difficulty is ``b_j = −c_j / a_j``: the ability at which the item is answered right
half the time. Weak normal priors keep the estimates finite where the answers do not (few models,
an item nearly every model passes): ``a ~ N(1, 1)`` — wide enough for a negative slope to show —
and ``c ~ N(0, 2²)``; the fit is the posterior mode of the item parameters with the abilities
integrated out (MML with priors, as BILOG and mirt do), named in every output (:class:`Priors`).

**Quadrature that does not move the estimates.** With hundreds of items a model's posterior over
``θ`` is narrow (a standard deviation of 0.05 or less), narrower than a 31-point Gauss–Hermite rule's
spacing near the centre: such a rule evaluates each model's likelihood at whichever node is nearest,
and the estimates move with the number of points (the 1PL's slope on 8 ExpliCa models was 0.79, 1.10,
1.11, 0.64 at 31, 61, 121, 201 points). Here the ability distribution is integrated on an evenly spaced
grid over ``[−6, 6]`` (weights ∝ the normal density; the trapezoid rule converges geometrically once
the spacing is below a posterior's width), and the grid is refined — 41, 81, 161, … points, each fit
starting from the last — until no item parameter and no ability moves more than
:attr:`Priors.quadrature_tol` between two grids; the points used and the last move are recorded.

Standard errors come from the observed information of each item's two parameters (Louis's formula
from the last E-step, one 2×2 block per item; the blocks between items are left out) plus the
priors' precision, counted once per parameter; the difficulty's by the delta method. The 1PL's
shared slope is the scale of the abilities, so its error is that of a spread estimated from the
models, not from the items: it is read from the curvature of the profile log-posterior (the
intercepts refitted at the slope ± a step), which counts the prior once. Abilities are MAP
estimates with the item parameters fixed, their standard errors from the test information at the
estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, log_expit, logsumexp

from lingdiag.errors import LingdiagError

Kind = Literal["1pl", "2pl"]
KINDS: tuple[Kind, ...] = ("1pl", "2pl")
Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""
Array = NDArray[np.float64]
GRID_BOUND = 6.0
"""The quadrature grid spans ``[−6, 6]``: the normal's mass outside it is 2·10⁻⁹."""
BLOCK_CELLS = 1 << 21
"""Items × quadrature points held at once (16 MiB of float64 per array)."""


class NotIdentified(LingdiagError):
    """The answers cannot identify the model (one model, every answer right...)."""


@dataclass(frozen=True, slots=True)
class Priors:
    """The priors of the item parameters and the fit's numerical settings, passed whole and recorded."""

    slope_mean: float = 1.0
    slope_sd: float = 1.0
    intercept_sd: float = 2.0
    nodes: int = 41
    """Quadrature points of the first grid (refined from there until the estimates are stable)."""
    max_iter: int = 2000
    tol: float = 1e-6
    """EM stops when no item parameter moves more than this."""
    quadrature_tol: float = 1e-4
    """The grid is refined until no item parameter or ability moves more than this between two grids."""
    max_nodes: int = 2561
    """The finest grid tried (a fit still moving there says so: :attr:`Estimates.quadrature_change`)."""

    def describe(self) -> str:
        """One line for tables and ``fit.json``."""
        return (f"MML (EM over an even grid on [−6, 6], refined from {self.nodes} points until no estimate moves "
                f"more than {self.quadrature_tol:g}), θ ~ N(0, 1), priors a ~ N({self.slope_mean:g}, "
                f"{self.slope_sd:g}²), c ~ N(0, {self.intercept_sd:g}²)")


@dataclass(frozen=True, slots=True)
class Estimates:
    """What one fit estimates (arrays are read-only)."""

    slope: Array
    """``a_j``, per item (all equal in the 1PL)."""
    intercept: Array
    """``c_j``, per item."""
    slope_se: Array
    intercept_se: Array
    cov_ac: Array
    """The covariance of each item's slope and intercept (for the difficulty's standard error)."""
    ability: Array
    """MAP ability per model."""
    ability_se: Array
    loglik: float
    """The marginal log-likelihood (priors not included)."""
    iterations: int
    converged: bool
    nodes: int = 0
    """Quadrature points of the grid the estimates come from."""
    quadrature_change: float = math.nan
    """The largest move of an item parameter or ability between the last two grids."""

    @property
    def difficulty(self) -> Array:
        """``b_j = −c_j / a_j``."""
        return difficulty(self.slope, self.intercept)

    @property
    def difficulty_se(self) -> Array:
        """The delta method's standard error of ``b_j``."""
        return difficulty_se(self.slope, self.intercept, self.slope_se, self.intercept_se, self.cov_ac)


def difficulty(slope: Array, intercept: Array) -> Array:
    """``b = −c / a``: the ability at which an item is right half the time (NaN where ``a`` is 0 or NaN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(-intercept / slope)


def difficulty_se(slope: Array, intercept: Array, slope_se: Array, intercept_se: Array, cov_ac: Array) -> Array:
    """The delta method's standard error of :func:`difficulty` from the errors of ``a`` and ``c`` and
    their covariance.
    """
    a, c = slope, intercept
    with np.errstate(divide="ignore", invalid="ignore"):
        var = intercept_se**2 / a**2 + (c**2 / a**4) * slope_se**2 - 2 * (c / a**3) * cov_ac
        return np.asarray(np.sqrt(np.maximum(var, 0.0)))


DEFAULT_PRIORS = Priors()


def grid(n: int) -> tuple[Array, Array]:
    """``n`` evenly spaced abilities over ``[−6, 6]`` and their weights under ``N(0, 1)`` (summing to 1)."""
    x = np.linspace(-GRID_BOUND, GRID_BOUND, n)
    w = np.exp(-0.5 * x**2)
    return x, w / w.sum()


class _Answers:
    """The models × items answers as one byte each, handed out in blocks of items as float64."""

    def __init__(self, responses: NDArray[np.int8], nodes: int) -> None:
        self.responses = responses
        self.step = max(64, BLOCK_CELLS // max(nodes, responses.shape[0]))

    def blocks(self) -> Iterator[tuple[slice, Array, Array]]:
        """(items, right, graded) per block: right and graded are models × block, 1.0 or 0.0."""
        n = self.responses.shape[1]
        for start in range(0, n, self.step):
            s = slice(start, min(n, start + self.step))
            block = self.responses[:, s]
            yield s, (block == 1).astype(np.float64), (block >= 0).astype(np.float64)


def _posterior(answers: _Answers, slope: Array, intercept: Array, nodes: Array, log_weights: Array,
               ) -> tuple[Array, float]:
    """Each model's posterior over the nodes (models × nodes) and the marginal log-likelihood."""
    ll = np.zeros((answers.responses.shape[0], len(nodes)))
    for s, x, graded in answers.blocks():
        z = slope[s, None] * nodes[None, :] + intercept[s, None]  # block × nodes
        # x·log σ(z) + (g − x)·log σ(−z) = g·log σ(−z) + x·z: one logarithm per item and node.
        ll += graded @ log_expit(-z) + x @ z
    joint = ll + log_weights[None, :]
    norm = logsumexp(joint, axis=1, keepdims=True)
    return np.exp(joint - norm), float(norm.sum())


def _m_step(answers: _Answers, post: Array, slope: Array, intercept: Array, nodes: Array, priors: Priors,
            shared: bool, fixed_slope: bool = False, steps: int = 2) -> tuple[Array, Array]:
    """Newton steps on each item's expected complete-data log-posterior, block by block (the 1PL's
    shared slope after a pass over every block; ``fixed_slope`` keeps it where it is).
    """
    pa, pc = 1 / priors.slope_sd**2, 1 / priors.intercept_sd**2
    a, c = slope.copy(), intercept.copy()
    ga_total, haa_total = 0.0, 0.0
    for s, x, graded in answers.blocks():
        r, n = x.T @ post, graded.T @ post  # block × nodes: expected right and graded
        aa, cc = a[s], c[s]
        for _ in range(steps):
            p = expit(aa[:, None] * nodes[None, :] + cc[:, None])
            resid = r - n * p
            w = n * p * (1 - p)
            gc = resid.sum(1) - pc * cc
            hcc = w.sum(1) + pc
            if shared or fixed_slope:
                cc = cc + np.clip(gc / hcc, -1.0, 1.0)
                continue
            ga = (resid * nodes).sum(1) - pa * (aa - priors.slope_mean)
            haa = (w * nodes**2).sum(1) + pa
            hac = (w * nodes).sum(1)
            det = haa * hcc - hac**2
            da = (hcc * ga - hac * gc) / det
            dc = (haa * gc - hac * ga) / det
            # A step of more than 1 on the logit scale is cut back: one item's Newton step cannot overshoot.
            scale = 1.0 / np.maximum(1.0, np.maximum(np.abs(da), np.abs(dc)))
            aa, cc = aa + scale * da, cc + scale * dc
        a[s], c[s] = aa, cc
        if shared and not fixed_slope:
            p = expit(aa[:, None] * nodes[None, :] + cc[:, None])
            ga_total += float(((r - n * p) * nodes).sum())
            haa_total += float((n * p * (1 - p) * nodes**2).sum())
    if shared and not fixed_slope:
        # The prior of the shared slope is one prior, counted once.
        ga_total -= pa * (a[0] - priors.slope_mean)
        a = np.full_like(a, a[0] + float(np.clip(ga_total / (haa_total + pa), -1.0, 1.0)))
    return a, c


def _item_information(answers: _Answers, post: Array, slope: Array, intercept: Array, nodes: Array,
                      priors: Priors) -> tuple[Array, Array, Array]:
    """Each item's observed information (Louis) as its three distinct entries: aa, ac, cc (the priors'
    precision added once per item parameter).
    """
    n_items = answers.responses.shape[1]
    iaa, iac, icc = np.empty(n_items), np.empty(n_items), np.empty(n_items)
    mean_theta = post @ nodes
    for s, x, graded in answers.blocks():
        p = expit(slope[s, None] * nodes[None, :] + intercept[s, None])  # block × nodes
        r, n = x.T @ post, graded.T @ post
        a_jq = n * p * (1 - p) - (r * (1 - p) ** 2 + (n - r) * p**2)
        # The posterior mean score of each answer, models × block: E[(x − p)(θ, 1)].
        ec = graded * (x - post @ p.T)
        ea = graded * (x * mean_theta[:, None] - (post * nodes[None, :]) @ p.T)
        iaa[s] = (a_jq * nodes**2).sum(1) + (ea**2).sum(0)
        iac[s] = (a_jq * nodes).sum(1) + (ea * ec).sum(0)
        icc[s] = a_jq.sum(1) + (ec**2).sum(0)
    return iaa + 1 / priors.slope_sd**2, iac, icc + 1 / priors.intercept_sd**2


def _errors(iaa: Array, iac: Array, icc: Array) -> tuple[Array, Array, Array]:
    """Standard errors of each slope and intercept and their covariance, from the information blocks."""
    det = iaa * icc - iac**2
    ok = (det > 0) & (iaa > 0) & (icc > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.where(ok, np.sqrt(icc / det), np.nan), np.where(ok, np.sqrt(iaa / det), np.nan),
                np.where(ok, -iac / det, np.nan))


def abilities(responses: NDArray[np.int8], slope: Array, intercept: Array, iterations: int = 50,
              prior_sd: float = 1.0) -> tuple[Array, Array]:
    """MAP abilities (prior ``N(0, prior_sd²)``) of each row of ``responses`` (1, 0, or −1 for missing)
    with the item parameters fixed, and their standard errors.
    """
    x = (responses == 1).astype(np.float64)
    graded = (responses >= 0).astype(np.float64)
    theta = np.zeros(responses.shape[0])
    precision = 1 / prior_sd**2
    for _ in range(iterations):
        p = expit(theta[:, None] * slope[None, :] + intercept[None, :])
        grad = ((x - p) * graded) @ slope - precision * theta
        info = (p * (1 - p) * graded) @ slope**2 + precision
        step = np.clip(grad / info, -1.0, 1.0)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    p = expit(theta[:, None] * slope[None, :] + intercept[None, :])
    info = (p * (1 - p) * graded) @ slope**2 + precision
    return theta, 1 / np.sqrt(info)


@dataclass(frozen=True, slots=True)
class _Em:
    slope: Array
    intercept: Array
    loglik: float
    iterations: int
    converged: bool


def _em(answers: _Answers, slope: Array, intercept: Array, nodes: Array, priors: Priors, shared: bool,
        fixed_slope: bool = False) -> _Em:
    """EM to convergence, accelerated by SQUAREM (Varadhan and Roland, 2008): two EM steps give a
    direction and a step length, the extrapolated point is stabilised by one more EM step and kept
    only where its log-posterior is no lower than the plain steps' (otherwise the plain EM step is).
    """
    log_weights = np.log(grid(len(nodes))[1])
    n_items = len(slope)

    def step(params: Array) -> tuple[Array, float]:
        a, c = params[:n_items], params[n_items:]
        post, loglik = _posterior(answers, a, c, nodes, log_weights)
        new_a, new_c = _m_step(answers, post, a, c, nodes, priors, shared, fixed_slope)
        return np.concatenate([new_a, new_c]), loglik + _log_prior(a, c, priors, shared)

    p0 = np.concatenate([slope, intercept])
    converged, calls = False, 0
    while calls < priors.max_iter:
        p1, _ = step(p0)
        p2, at_p1 = step(p1)
        calls += 2
        if float(np.max(np.abs(p2 - p1))) < priors.tol:
            p0, converged = p2, True
            break
        r, v = p1 - p0, p2 - 2 * p1 + p0
        norm_v = float(np.linalg.norm(v))
        alpha = min(-1.0, -float(np.linalg.norm(r)) / norm_v) if norm_v > 0 else -1.0
        p3, at_p = step(p0 - 2 * alpha * r + alpha**2 * v)
        calls += 1
        p0 = p3 if at_p >= at_p1 and np.isfinite(p3).all() else p2
    a, c = p0[:n_items], p0[n_items:]
    _, loglik = _posterior(answers, a, c, nodes, log_weights)
    return _Em(a, c, loglik, calls, converged)


def _log_prior(slope: Array, intercept: Array, priors: Priors, shared: bool) -> float:
    a = slope[:1] if shared else slope
    return float(-0.5 * (((a - priors.slope_mean) / priors.slope_sd) ** 2).sum()
                 - 0.5 * ((intercept / priors.intercept_sd) ** 2).sum())


def _shared_slope_se(answers: _Answers, em: _Em, nodes: Array, priors: Priors) -> float:
    """The 1PL slope's standard error from the curvature of the profile log-posterior (the intercepts
    refitted at the slope ± a step).
    """
    a = float(em.slope[0])
    h = 0.02 * max(abs(a), 0.1)
    value = []
    for da in (-h, h):
        moved = _em(answers, np.full_like(em.slope, a + da), em.intercept, nodes, priors, True, fixed_slope=True)
        value.append(moved.loglik + _log_prior(moved.slope, moved.intercept, priors, True))
    centre = em.loglik + _log_prior(em.slope, em.intercept, priors, True)
    curvature = (value[0] - 2 * centre + value[1]) / h**2
    return 1 / math.sqrt(-curvature) if curvature < 0 else math.nan


def fit(responses: NDArray[np.int8], kind: Kind = "2pl", priors: Priors = DEFAULT_PRIORS, errors: bool = True,
        ) -> Estimates:
    """Fit ``kind`` to a models × items matrix of 1 (right), 0 (wrong) and −1 (missing).

    Args:
        responses: The answers (one byte each; never copied whole as floats); every item should have
            two graded models and both outcomes (others are fitted, but only the priors speak for them).
        kind: ``1pl`` (one slope for all items) or ``2pl``.
        priors: The priors and settings.
        errors: Whether to compute the standard errors (NaN where not: leaving models out needs none).

    Returns:
        The estimates (read-only arrays).

    Raises:
        NotIdentified: fewer than two models or no item.
    """
    n_models, n_items = responses.shape
    if n_models < 2:
        raise NotIdentified(f"{n_models} model(s): an item model needs at least two models to compare")
    if n_items == 0:
        raise NotIdentified("no item to fit")
    responses = np.ascontiguousarray(responses, dtype=np.int8)
    right = (responses == 1).sum(0)
    graded = (responses >= 0).sum(0)
    share = (right + 0.5) / (graded + 1.0)
    slope = np.full(n_items, priors.slope_mean)
    intercept = np.log(share / (1 - share)) * math.sqrt(1 + math.pi * priors.slope_mean**2 / 8)
    shared = kind == "1pl"
    n, previous, change, iterations = priors.nodes, None, math.nan, 0
    while True:
        nodes = grid(n)[0]
        answers = _Answers(responses, n)
        em = _em(answers, slope, intercept, nodes, priors, shared)
        iterations += em.iterations
        theta, theta_se = abilities(responses, em.slope, em.intercept)
        now = np.concatenate([em.slope, em.intercept, theta])
        if previous is not None:
            change = float(np.max(np.abs(now - previous)))
        slope, intercept, previous = em.slope, em.intercept, now
        if change < priors.quadrature_tol or 2 * n - 1 > priors.max_nodes:
            break
        n = 2 * n - 1
    post, loglik = _posterior(answers, slope, intercept, nodes, np.log(grid(n)[1]))
    if not errors:
        slope_se = intercept_se = cov = np.full(n_items, np.nan)
    else:
        slope_se, intercept_se, cov = _errors(*_item_information(answers, post, slope, intercept, nodes, priors))
    if shared and errors:
        slope_se = np.full(n_items, _shared_slope_se(answers, em, nodes, priors))
        with np.errstate(divide="ignore", invalid="ignore"):
            _, iac, icc = _item_information(answers, post, slope, intercept, nodes, priors)
            intercept_se, cov = np.where(icc > 0, 1 / np.sqrt(icc), np.nan), np.zeros(n_items)
    arrays = [slope, intercept, slope_se, intercept_se, cov, theta, theta_se]
    for arr in arrays:
        arr.setflags(write=False)
    return Estimates(slope, intercept, np.asarray(slope_se), np.asarray(intercept_se), np.asarray(cov), theta,
                     theta_se, loglik, iterations, em.converged, n, change)
