"""A folder of runs with answers drawn from a known item model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import simulated, write_runs


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[list[Path], np.ndarray, np.ndarray]:
    """12 models × 150 items from a 2PL, the last 6 items with a negative slope."""
    slopes = np.r_[np.random.default_rng(5).lognormal(0.3, 0.2, 144), np.full(6, -2.5)]
    x, theta, _, b = simulated(12, 150, seed=3, slopes=slopes)
    return write_runs(tmp_path / "runs", x), x, b
