"""Agreement statistics against published values."""

import numpy as np
import pytest

from lingdiag.human.agreement import adjacent_agreement, icc2

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; their Table 4 gives
# ICC(2,1) = .29 and ICC(2,4) = .62.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)


def test_icc2_reproduces_shrout_and_fleiss_table_4():
    found_icc = icc2(SHROUT_FLEISS)
    assert found_icc is not None
    single, average = found_icc
    assert round(single, 2) == 0.29 and round(average, 2) == 0.62


def test_icc2_needs_two_targets_and_two_raters():
    assert icc2(SHROUT_FLEISS[:1]) is None and icc2(SHROUT_FLEISS[:, :1]) is None


def test_adjacent_agreement_counts_pairs_within_one_point():
    # stimulus 1: (5,4) yes, (5,2) no, (4,2) no; stimulus 2: (3,3) yes
    assert adjacent_agreement([[5, 4, 2], [3, 3]]) == pytest.approx(2 / 4)


def _pairwise(ratings, tolerance=1.0):
    """The definition: every within-stimulus pair listed (quadratic; for small data only)."""
    from itertools import combinations
    pairs = [abs(x - y) <= tolerance for r in ratings for x, y in combinations(r, 2)]
    return sum(pairs) / len(pairs) if pairs else None


@pytest.mark.parametrize("seed", range(30))
def test_adjacent_agreement_by_counting_equals_the_pairwise_definition(seed):
    rng = np.random.default_rng(seed)
    scale = [1, 2, 3, 4, 5, 6, 7] if seed % 3 else [0.0, 0.5, 1.5, 2.0, 3.25, -1.0]
    ratings = [list(rng.choice(scale, size=int(rng.integers(0, 12)))) for _ in range(int(rng.integers(1, 8)))]
    tolerance = [1.0, 0.5, 2.0][seed % 3]
    expected = _pairwise(ratings, tolerance)
    got = adjacent_agreement(ratings, tolerance)
    assert got == expected if expected is None else got == pytest.approx(expected, abs=1e-12)


def test_adjacent_agreement_is_linear_in_raters():
    # Two million ratings of one stimulus: 2e12 pairs, which listing could never finish;
    # counting is exact (0-1 and 1-2 and equal pairs agree, 0-2 pairs do not).
    n = 2_000_000
    ratings = [0.0] * (n // 2) + [1.0] * (n // 4) + [2.0] * (n // 4)
    a, b, c = n // 2, n // 4, n // 4
    close = a * (a - 1) // 2 + b * (b - 1) // 2 + c * (c - 1) // 2 + a * b + b * c
    assert adjacent_agreement([ratings]) == close / (n * (n - 1) // 2)


def test_agreement_of_a_hundred_thousand_raters():
    # 100k raters in two lists of two stimuli: 50k ratings per stimulus (1.25e9 pairs each).
    from lingdiag.human.agreement import agreement
    rng = np.random.default_rng(0)
    lists = [["s1", "s2"], ["s3", "s4"]]
    table = {(f"r{i}", s): float(rng.integers(1, 8)) for i in range(100_000) for s in lists[i % 2]}
    found = agreement("rating", "ordinal", table, lists, seed=0)
    assert found.n_raters == 100_000 and found.n_ratings == 200_000
    assert found.adjacent is not None and 0 < found.adjacent < 1
