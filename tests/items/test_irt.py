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
