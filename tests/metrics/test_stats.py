"""The one statistics module: the correlation guard, the percentile bootstrap and Holm over any rows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from lingdiag.analysis.compare import Comparison
from lingdiag.metrics.stats import (
    correlatable,
    difference_ci,
    holm,
    holm_rows,
    pearson,
    percentile_interval,
    resampled_means,
    spearman,
)


def test_holm_is_the_step_down_correction_with_ties_and_the_cap_at_one() -> None:
    # By hand: sorted 0.01, 0.01, 0.03, 0.5 -> 4*0.01, max(3*0.01, .04), max(2*0.03, .04), min(1, 0.5) after max.
    assert holm([0.5, 0.01, 0.03, 0.01]) == pytest.approx([0.5, 0.04, 0.06, 0.04])
    assert holm([0.4, 0.6]) == pytest.approx([0.8, 0.8]) and holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []


@dataclass(frozen=True)
class Other:
    name: str
    p: float
    p_holm: float = math.nan


def test_holm_rows_sets_p_holm_on_any_row_type() -> None:
    row = Comparison("c", 10, 0.5, 0.4, 0.1, (0.0, 0.2), 2, 1, 0.02)
    assert [r.p_holm for r in holm_rows([row, row])] == pytest.approx([0.04, 0.04])
    out = holm_rows([Other("a", 0.02), Other("b", 0.5)])
    assert all(type(o) is Other for o in out) and [(o.name, o.p) for o in out] == [("a", 0.02), ("b", 0.5)]
    assert [o.p_holm for o in out] == pytest.approx([0.04, 0.5])


def test_correlations_are_none_below_three_pairs_or_with_a_constant_side() -> None:
    assert not correlatable([1, 2], [1, 2]) and not correlatable([1, 1, 1], [1, 2, 3])
    assert not correlatable([1, 2, 3], [4, 4, 4]) and correlatable([1, 2, 3], [3, 1, 2])
    assert pearson([1, 2], [1, 2]) is None and spearman([1, 2, 3], [5, 5, 5]) is None
    r = pearson([1, 2, 3, 4], [1, 3, 2, 4])
    assert r is not None and r.n == 4 and r.r == pytest.approx(0.8) and r.ci95 is not None
    rho = spearman([1, 2, 3, 4], [10, 30, 20, 40])
    assert rho is not None and rho.r == pytest.approx(0.8) and rho.ci95 is None and 0 < rho.p < 1


def test_the_bootstrap_repeats_and_reads_the_percentiles() -> None:
    values = np.arange(10, dtype=float)
    a = resampled_means(values, np.random.default_rng(3), 50)
    assert a.shape == (50,) and np.array_equal(a, resampled_means(values, np.random.default_rng(3), 50))
    assert percentile_interval(np.arange(101, dtype=float)) == (2.5, 97.5)
    low, high = percentile_interval(np.array([0.123456, 0.654321]))  # unrounded: shown values round once
    assert math.isclose(low, 0.123456 + 0.025 * 0.530865) and math.isclose(high, 0.654321 - 0.025 * 0.530865)
    ci = difference_ci([True] * 8 + [False] * 2, [True] * 3 + [False] * 7)
    assert ci == difference_ci([True] * 8 + [False] * 2, [True] * 3 + [False] * 7) and ci[0] < 0.5 < ci[1]
    assert all(math.isnan(x) for x in difference_ci([], [True]))


def test_the_paired_bootstrap_by_counts_is_the_bootstrap_over_items() -> None:
    """Drawn as multinomial counts of the discordant items, the paired bootstrap's interval is the one
    of resampling the items themselves (within the Monte Carlo error of 20,000 resamples each)."""
    from lingdiag.metrics.stats import paired_difference_ci

    delta = np.array([1.0] * 30 + [-1.0] * 12 + [0.0] * 158)
    by_items = percentile_interval(resampled_means(delta, np.random.default_rng(0), 20_000))
    by_counts = paired_difference_ci(30, 12, 200, np.random.default_rng(1), 20_000)
    assert by_counts == pytest.approx(by_items, abs=0.006)
    assert paired_difference_ci(30, 12, 200, np.random.default_rng(5)) == \
        paired_difference_ci(30, 12, 200, np.random.default_rng(5))
    assert paired_difference_ci(0, 0, 10, np.random.default_rng(0)) == (0.0, 0.0)
    big = paired_difference_ci(3000, 1000, 100_000, np.random.default_rng(0))  # no n × samples array
    assert big[0] < 0.02 < big[1] and big[1] - big[0] < 0.01


@pytest.mark.parametrize(("counts", "want"), [
    ([23, 17], [58, 42]),  # 57.5 and 42.5: the float 0.575 printed 57%, and the row summed to 99%
    ([1, 1, 1], [34, 33, 33]),  # thirds: a row of 33% sums to 99%
    ([2, 1, 1, 1, 1, 1], [29, 15, 14, 14, 14, 14]),
    ([7], [100]),
    ([0, 5], [0, 100]),
    ([], []),
    ([0, 0], [0, 0]),
])
def test_whole_percents_come_from_exact_counts_and_sum_to_100(counts: list[int], want: list[int]) -> None:
    from lingdiag.metrics.stats import whole_percents

    got = whole_percents(counts)
    assert got == want
    total = sum(counts)
    if total:
        assert sum(got) == 100
        assert all(c * 100 // total <= p <= -(-c * 100 // total) for c, p in zip(counts, got, strict=True))


def test_one_share_is_rounded_from_the_exact_fraction() -> None:
    from lingdiag.metrics.interpretable import counts_reason
    from lingdiag.metrics.stats import percent

    assert [percent(23, 40), percent(1, 3), percent(2, 3), percent(1, 200), percent(0, 5)] == \
        ["58%", "33%", "67%", "1%", "0%"]
    assert f"{23 / 40:.0%}" == "57%"  # what the float printed
    assert counts_reason({"n": 40, "n_unparsed": 23}) == "58% unparsed or failed"
