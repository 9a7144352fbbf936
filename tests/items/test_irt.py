"""The MML fit recovers the item model it is handed answers of, its intervals cover, and it refuses
what cannot identify it."""

import numpy as np
import pytest
from helpers import simulated
from scipy.stats import pearsonr, spearmanr

from lingdiag.items import irt


def test_2pl_recovers_simulated_parameters():
    x, theta, a, b = simulated(300, 60, seed=1)
    est = irt.fit(x, "2pl")
    assert est.converged
    assert spearmanr(est.difficulty, b)[0] > 0.95
    assert pearsonr(est.slope, a)[0] > 0.6
    assert pearsonr(est.ability, theta)[0] > 0.9  # 60 items: a reliability near 0.9
    # Abilities are on N(0, 1): the fitted scale is the simulated one (no stretch).
    slope = np.polyfit(theta, est.ability, 1)[0]
    assert 0.85 < slope < 1.15
    covered = np.abs(est.difficulty - b) < irt.Z95 * est.difficulty_se
    assert covered.mean() > 0.85


def test_1pl_shares_one_slope_and_orders_items_by_their_right_answers():
    x, _, _, _ = simulated(40, 80, seed=2)
    est = irt.fit(x, "1pl")
    assert np.ptp(est.slope) == 0
    right = x.sum(0)
    # Complete answers: the 1PL difficulty is (nearly) a function of how many models are right.
    assert spearmanr(est.difficulty, -right)[0] > 0.97


def test_missing_answers_leave_the_estimates_where_they_were():
    x, _, _, b = simulated(200, 50, seed=4)
    holes = x.copy()
    holes[np.random.default_rng(0).random(x.shape) < 0.3] = -1  # 30% never answered
    est = irt.fit(holes, "2pl")
    assert spearmanr(est.difficulty, b)[0] > 0.93
    # The same 30% counted wrong would make every item look harder.
    wrong = np.where(holes < 0, 0, holes).astype(np.int8)
    assert np.median(irt.fit(wrong, "2pl").difficulty - est.difficulty) > 0.3


def test_negative_slope_is_found():
    slopes = np.r_[np.ones(40), [-2.0, -2.0]]
    x, _, _, _ = simulated(200, 42, seed=6, slopes=slopes)
    est = irt.fit(x, "2pl")
    assert (est.slope[-2:] < 0).all()
    assert (est.slope[-2:] + irt.Z95 * est.slope_se[-2:] < 0).all()  # clearly negative with 200 models
    assert (est.slope[:40] > 0).mean() > 0.95


@pytest.mark.parametrize("shape", [(1, 10), (0, 5), (3, 0)])
def test_too_little_to_fit_is_one_line(shape):
    with pytest.raises(irt.NotIdentified) as e:
        irt.fit(np.ones(shape, dtype=np.int8), "2pl")
    assert "\n" not in str(e.value)


def test_deterministic():
    x, _, _, _ = simulated(20, 50, seed=7)
    a, b = irt.fit(x, "2pl"), irt.fit(x, "2pl")
    assert np.array_equal(a.slope, b.slope) and np.array_equal(a.ability, b.ability)
    assert not a.slope.flags.writeable


@pytest.mark.parametrize(("models", "kind"), [(8, "1pl"), (30, "2pl"), (100, "2pl")])
def test_estimates_do_not_move_as_the_quadrature_points_double(models, kind):
    # 300 items: each model's posterior is narrow (SD about 0.15), which a 31-point Gauss–Hermite rule missed.
    x, _, _, _ = simulated(models, 300 if models < 100 else 120, seed=11)
    coarse = irt.fit(x, kind)
    fine = irt.fit(x, kind, irt.Priors(nodes=2 * coarse.nodes - 1))
    assert coarse.quadrature_change < irt.DEFAULT_PRIORS.quadrature_tol and coarse.converged
    for name in ("slope", "intercept", "ability"):
        assert np.max(np.abs(getattr(coarse, name) - getattr(fine, name))) < 1e-3, name


def test_the_1pl_slope_error_is_the_spread_of_the_models_not_of_the_items():
    # The shared slope is the scale of the abilities: with 8 models its error is about a / √(2·8), however
    # many items there are (the prior counted once, not once per item: that gave a tenth of it).
    errors, slopes = [], []
    for seed in range(20):
        x, _, _, _ = simulated(8, 100, seed=seed, slopes=[1.0] * 100)
        est = irt.fit(x, "1pl")
        errors.append(est.slope_se[0])
        slopes.append(est.slope[0])
    spread = np.std(slopes)  # the slope's real spread over panels (the truth is 1)
    assert 0.7 < np.mean(errors) / spread < 1.4, (np.mean(errors), spread)
    assert np.mean(np.abs(np.array(slopes) - 1) < irt.Z95 * np.array(errors)) > 0.85


def test_2pl_errors_agree_with_a_parametric_bootstrap():
    # 100 models × 40 items with known parameters: the stated errors against the spread of the estimates over
    # answers drawn again from the same parameters.
    rng = np.random.default_rng(3)
    theta, a, b = rng.normal(size=100), rng.lognormal(0, 0.3, 40), rng.normal(size=40)
    p = 1 / (1 + np.exp(-(a * (theta[:, None] - b))))
    fits = [irt.fit((rng.random(p.shape) < p).astype(np.int8), "2pl") for _ in range(12)]
    spread = np.std([f.slope for f in fits], axis=0)
    stated = np.mean([f.slope_se for f in fits], axis=0)
    assert 0.75 < np.median(stated / spread) < 1.35, np.median(stated / spread)
    spread_c = np.std([f.intercept for f in fits], axis=0)
    assert 0.75 < np.median(np.mean([f.intercept_se for f in fits], axis=0) / spread_c) < 1.35
