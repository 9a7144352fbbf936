"""Item response models fitted by marginal maximum likelihood: Bock and Aitkin's EM over a
Gauss–Hermite quadrature of the ability distribution, every item at once (numpy).

The model: a model ``m`` of ability ``θ`` answers item ``j`` right with probability
``σ(a_j θ + c_j)``; ``θ ~ N(0, 1)`` over the models fixes the scale. The **2PL** fits a slope
``a_j`` (discrimination) and an intercept ``c_j`` per item; the **1PL** one slope shared by all
items. The difficulty is ``b_j = −c_j / a_j``: the ability at which the item is answered right
half the time. Weak normal priors keep the estimates finite where the answers do not (few models,
an item nearly every model passes): ``a ~ N(1, 1)`` — wide enough for a negative slope to show —
and ``c ~ N(0, 2²)``; the fit is the posterior mode of the item parameters with the abilities
integrated out (MML with priors, as BILOG and mirt do), named in every output (:class:`Priors`).

Standard errors come from the observed information of each item's two parameters (Louis's
formula from the last E-step, one 2×2 block per item; the blocks between items are left out),
plus the priors' precision; the difficulty's by the delta method. Abilities are MAP estimates
with the item parameters fixed, their standard errors from the test information at the estimate.
"""

from __future__ import annotations

import math
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


class NotIdentified(LingdiagError):
    """The answers cannot identify the model (one model, every answer right...)."""


@dataclass(frozen=True, slots=True)
class Priors:
    """The priors of the item parameters and the fit's numerical settings, passed whole and recorded."""

    slope_mean: float = 1.0
    slope_sd: float = 1.0
    intercept_sd: float = 2.0
    nodes: int = 31
    """Gauss–Hermite quadrature points of the ability distribution."""
    max_iter: int = 500
    tol: float = 1e-5
    """EM stops when no item parameter moves more than this."""

    def describe(self) -> str:
        """One line for tables and ``fit.json``."""
        return (f"MML (EM, {self.nodes}-point Gauss–Hermite), θ ~ N(0, 1), priors a ~ N({self.slope_mean:g}, "
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


def quadrature(n: int) -> tuple[Array, Array]:
    """Nodes and weights of ``N(0, 1)`` with ``n`` Gauss–Hermite points."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return x * math.sqrt(2.0), w / math.sqrt(math.pi)


def _posterior(x: Array, missing_right: Array, slope: Array, intercept: Array, nodes: Array,
               log_weights: Array) -> tuple[Array, float]:
    """Each model's posterior over the nodes (models × nodes) and the marginal log-likelihood."""
    z = slope[:, None] * nodes[None, :] + intercept[:, None]  # items × nodes
    ll = x @ log_expit(z) + missing_right @ log_expit(-z)
    joint = ll + log_weights[None, :]
    norm = logsumexp(joint, axis=1, keepdims=True)
    return np.exp(joint - norm), float(norm.sum())


def _m_step(r: Array, n: Array, slope: Array, intercept: Array, nodes: Array, priors: Priors, shared: bool,
            steps: int = 2) -> tuple[Array, Array]:
    """Newton steps on each item's expected complete-data log-posterior (``r`` right and ``n``
    graded expected per item and node).
    """
    pa, pc = 1 / priors.slope_sd**2, 1 / priors.intercept_sd**2
    a, c = slope.copy(), intercept.copy()
    for _ in range(steps):
        p = expit(a[:, None] * nodes[None, :] + c[:, None])
        resid = r - n * p
        w = n * p * (1 - p)
        gc = resid.sum(1) - pc * c
        hcc = w.sum(1) + pc
        if shared:
            c = c + gc / hcc
            p = expit(a[:, None] * nodes[None, :] + c[:, None])
            ga = float(((r - n * p) * nodes).sum()) - pa * (a[0] - priors.slope_mean)
            haa = float((n * p * (1 - p) * nodes**2).sum()) + pa
            a = np.full_like(a, a[0] + float(np.clip(ga / haa, -1.0, 1.0)))
            continue
        ga = (resid * nodes).sum(1) - pa * (a - priors.slope_mean)
        haa = (w * nodes**2).sum(1) + pa
        hac = (w * nodes).sum(1)
        det = haa * hcc - hac**2
        da = (hcc * ga - hac * gc) / det
        dc = (haa * gc - hac * ga) / det
        # A step of more than 1 on the logit scale is cut back: one item's Newton step cannot overshoot.
        scale = 1.0 / np.maximum(1.0, np.maximum(np.abs(da), np.abs(dc)))
        a, c = a + scale * da, c + scale * dc
    return a, c


def _item_information(x: Array, graded: Array, post: Array, slope: Array, intercept: Array, nodes: Array,
                      priors: Priors) -> tuple[Array, Array, Array]:
    """Each item's observed information (Louis) as its three distinct entries: aa, ac, cc."""
    p = expit(slope[:, None] * nodes[None, :] + intercept[:, None])  # items × nodes
    r = x.T @ post
    n = graded.T @ post
    a_jq = n * p * (1 - p) - (r * (1 - p) ** 2 + (n - r) * p**2)
    iaa = (a_jq * nodes**2).sum(1)
    iac = (a_jq * nodes).sum(1)
    icc = a_jq.sum(1)
    # The posterior mean score of each answer, models × items: E[(x − p)(θ, 1)].
    mean_theta = post @ nodes
    ep = post @ p.T
    etp = (post * nodes[None, :]) @ p.T
    ec = graded * (x - ep)
    ea = graded * (x * mean_theta[:, None] - etp)
    iaa += (ea**2).sum(0) + 1 / priors.slope_sd**2
    iac += (ea * ec).sum(0)
    icc += (ec**2).sum(0) + 1 / priors.intercept_sd**2
    return iaa, iac, icc


def _errors(iaa: Array, iac: Array, icc: Array, shared: bool) -> tuple[Array, Array, Array]:
    """Standard errors of each slope and intercept and their covariance, from the information blocks."""
    if shared:
        # The shared slope is estimated from every item; each intercept's error is its own block's.
        total = float(iaa.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            intercept_se = np.where(icc > 0, 1 / np.sqrt(icc), np.nan)
        return np.full(len(iaa), 1 / math.sqrt(total) if total > 0 else math.nan), intercept_se, np.zeros(len(iaa))
    det = iaa * icc - iac**2
    ok = (det > 0) & (iaa > 0) & (icc > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.where(ok, np.sqrt(icc / det), np.nan), np.where(ok, np.sqrt(iaa / det), np.nan),
                np.where(ok, -iac / det, np.nan))


def abilities(responses: NDArray[np.int8], slope: Array, intercept: Array, iterations: int = 50,
              ) -> tuple[Array, Array]:
    """MAP abilities (prior ``N(0, 1)``) of each row of ``responses`` (1, 0, or −1 for missing) with
    the item parameters fixed, and their standard errors.
    """
    x = (responses == 1).astype(np.float64)
    graded = (responses >= 0).astype(np.float64)
    theta = np.zeros(responses.shape[0])
    for _ in range(iterations):
        p = expit(theta[:, None] * slope[None, :] + intercept[None, :])
        grad = ((x - p) * graded) @ slope - theta
        info = (p * (1 - p) * graded) @ slope**2 + 1.0
        step = np.clip(grad / info, -1.0, 1.0)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-6:
            break
    p = expit(theta[:, None] * slope[None, :] + intercept[None, :])
    info = (p * (1 - p) * graded) @ slope**2 + 1.0
    return theta, 1 / np.sqrt(info)


def fit(responses: NDArray[np.int8], kind: Kind = "2pl", priors: Priors = DEFAULT_PRIORS) -> Estimates:
    """Fit ``kind`` to a models × items matrix of 1 (right), 0 (wrong) and −1 (missing).

    Args:
        responses: The answers; every item should have two graded models and both outcomes
            (others are fitted, but only the priors speak for them).
        kind: ``1pl`` (one slope for all items) or ``2pl``.
        priors: The priors and settings.

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
    x = (responses == 1).astype(np.float64)
    graded = (responses >= 0).astype(np.float64)
    wrong = graded - x
    nodes, weights = quadrature(priors.nodes)
    log_weights = np.log(weights)
    share = (x.sum(0) + 0.5) / (graded.sum(0) + 1.0)
    slope = np.full(n_items, priors.slope_mean)
    intercept = np.log(share / (1 - share)) * math.sqrt(1 + math.pi * priors.slope_mean**2 / 8)
    shared = kind == "1pl"
    converged, iteration = False, 0
    for iteration in range(1, priors.max_iter + 1):  # noqa: B007  (the count is reported)
        post, _ = _posterior(x, wrong, slope, intercept, nodes, log_weights)
        r, n = x.T @ post, graded.T @ post
        new_slope, new_intercept = _m_step(r, n, slope, intercept, nodes, priors, shared)
        moved = float(max(np.max(np.abs(new_slope - slope)), np.max(np.abs(new_intercept - intercept))))
        slope, intercept = new_slope, new_intercept
        if moved < priors.tol:
            converged = True
            break
    post, loglik = _posterior(x, wrong, slope, intercept, nodes, log_weights)
    slope_se, intercept_se, cov = _errors(*_item_information(x, graded, post, slope, intercept, nodes, priors), shared)
    theta, theta_se = abilities(responses, slope, intercept)
    arrays = [slope, intercept, slope_se, intercept_se, cov, theta, theta_se]
    for arr in arrays:
        arr.setflags(write=False)
    return Estimates(slope, intercept, np.asarray(slope_se), np.asarray(intercept_se), np.asarray(cov), theta,
                     theta_se, loglik, iteration, converged)
