"""Wilson intervals, unrounded: a bound is rounded once, where it is shown (issue 57: rounded to 4
places and printed at 3, 0.20655 read 0.206)."""

from __future__ import annotations

import math

import pytest

from lingdiag.metrics.core import wilson
from lingdiag.study.across import Accuracy


@pytest.mark.parametrize(("right", "n"), [(1, 1), (1, 5), (4, 7), (6, 8), (10, 10), (263, 400)])
def test_wilson_agrees_with_statsmodels_unrounded(right: int, n: int) -> None:
    confint = pytest.importorskip("statsmodels.stats.proportion").proportion_confint
    low, high = confint(right, n, method="wilson")
    ours = wilson(right, n)
    assert math.isclose(ours[0], low, abs_tol=1e-8) and math.isclose(ours[1], high, abs_tol=1e-8)


def test_a_bound_is_rounded_once_where_it_is_shown() -> None:
    assert f"{wilson(1, 1)[0]:.3f}" == "0.207"  # 0.206549...; rounded to 0.2065 first it printed 0.206
    assert f"{wilson(1, 5)[1]:.3f}" == "0.624"  # 0.624465...; 0.6245 printed 0.625
    assert f"{Accuracy(1, 1).ci95[0]:.3f}" == "0.207"  # the study report's intervals
    assert all(math.isnan(x) for x in wilson(0, 0))


@pytest.mark.parametrize("n", [1, 3, 7, 40, 333, 1000])
def test_the_bounds_hold_the_share_exactly_at_none_and_all(n: int) -> None:
    assert wilson(0, n)[0] == 0.0 and wilson(n, n)[1] == 1.0
    for k in range(0, n + 1, max(1, n // 20)):
        low, high = wilson(k, n)
        assert low <= k / n <= high
