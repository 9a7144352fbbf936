"""Agreement statistics against published values."""

import numpy as np
import pytest

from lingdiag.human.agreement import adjacent_agreement, icc2

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; their Table 4 gives
# ICC(2,1) = .29 and ICC(2,4) = .62.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)


def test_icc2_reproduces_shrout_and_fleiss_table_4():
    single, average = icc2(SHROUT_FLEISS)
    assert round(single, 2) == 0.29 and round(average, 2) == 0.62


def test_icc2_needs_two_targets_and_two_raters():
    assert icc2(SHROUT_FLEISS[:1]) is None and icc2(SHROUT_FLEISS[:, :1]) is None


def test_adjacent_agreement_counts_pairs_within_one_point():
    # stimulus 1: (5,4) yes, (5,2) no, (4,2) no; stimulus 2: (3,3) yes
    assert adjacent_agreement([[5, 4, 2], [3, 3]]) == pytest.approx(2 / 4)
