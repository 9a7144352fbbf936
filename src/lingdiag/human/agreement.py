"""Agreement between raters on one scale question.

- Krippendorff's α at the study's level of measurement (``krippendorff`` package, the
  ``human`` extra); it takes the incomplete raters × stimuli design of rating lists as is.
- ICC(2,1) and ICC(2,k), two-way random effects, absolute agreement (Shrout & Fleiss 1979,
  "Intraclass correlations: uses in assessing rater reliability", Psychol. Bull. 86(2), Case 2):
  with ``n`` stimuli, ``k`` raters and the mean squares of rows (MSR), columns (MSC) and error
  (MSE) of the two-way ANOVA without replication,
  ICC(2,1) = (MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE) / n) and
  ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n). They need a complete block, so they are
  computed per list on the raters who answered all of it, and averaged weighted by stimuli.
- Split-half reliability: each stimulus's ratings are split at random into two halves, the
  half means correlated (Pearson) across stimuli and stepped up with Spearman-Brown
  (2r / (1 + r)); the mean over 100 seeded splits.
- Adjacent agreement (ImperfectiveNLI App. C): the share of pairs of ratings of one stimulus
  that differ by at most one scale point.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lingdiag.errors import MissingDependency

SPLITS = 100


@dataclass(frozen=True, slots=True)
class Agreement:
    """Agreement on one question."""

    question: str
    n_raters: int
    n_stimuli: int
    n_ratings: int
    mean: float
    sd: float
    alpha: float | None
    level: str
    icc_single: float | None
    """ICC(2,1)."""
    icc_average: float | None
    """ICC(2,k)."""
    split_half: float | None
    """Spearman-Brown corrected split-half correlation."""
    adjacent: float | None


def krippendorff_alpha(matrix: np.ndarray, level: str) -> float | None:
    """α of a raters × stimuli matrix (NaN where a rater did not rate)."""
    try:
        import krippendorff
    except ImportError as e:
        raise MissingDependency("Krippendorff's alpha", "human", ["krippendorff"]) from e
    if np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2) < 1 or len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))  # type: ignore[arg-type]


def icc2(block: np.ndarray) -> tuple[float, float] | None:
    """(ICC(2,1), ICC(2,k)) of a complete stimuli × raters block (Shrout & Fleiss Case 2)."""
    n, k = block.shape
    if n < 2 or k < 2:
        return None
    grand = block.mean()
    ss_rows = k * np.sum((block.mean(axis=1) - grand) ** 2)
    ss_cols = n * np.sum((block.mean(axis=0) - grand) ** 2)
    ss_err = np.sum((block - grand) ** 2) - ss_rows - ss_cols
    msr, msc, mse = ss_rows / (n - 1), ss_cols / (k - 1), ss_err / ((n - 1) * (k - 1))
    single_den = msr + (k - 1) * mse + k * (msc - mse) / n
    average_den = msr + (msc - mse) / n
    if single_den == 0 or average_den == 0:
        return None
    return float((msr - mse) / single_den), float((msr - mse) / average_den)


def split_half(ratings: Sequence[Sequence[float]], seed: int) -> float | None:
    """Mean Spearman-Brown split-half reliability over ``SPLITS`` random splits."""
    usable = [list(r) for r in ratings if len(r) >= 2]
    if len(usable) < 3:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(SPLITS):
        a, b = [], []
        for r in usable:
            perm = rng.permutation(r)
            half = len(perm) // 2
            a.append(perm[:half].mean())
            b.append(perm[half:].mean())
        if np.std(a) == 0 or np.std(b) == 0:
            continue
        r_ab = float(np.corrcoef(a, b)[0, 1])
        if r_ab <= -1:  # Spearman-Brown is undefined at r = -1
            continue
        values.append(2 * r_ab / (1 + r_ab))
    return float(np.mean(values)) if values else None


def adjacent_agreement(ratings: Sequence[Sequence[float]], tolerance: float = 1.0) -> float | None:
    """Share of within-stimulus rating pairs at most ``tolerance`` apart.

    Counted from each stimulus's histogram of ratings, never by listing the pairs: linear in
    the number of ratings (plus the distinct values, a scale's few points), where listing
    every pair is quadratic in the raters of a stimulus.
    """
    close = total = 0
    for r in ratings:
        counts = Counter(r)
        values = sorted(counts)
        n = len(r)
        total += n * (n - 1) // 2
        # Pairs within one value, then pairs of distinct values in the window above each one
        # (two pointers: the window's end only moves forward as the value grows).
        close += sum(c * (c - 1) // 2 for c in counts.values())
        end = 0
        in_window = 0  # ratings of values[i+1 : end]
        for i, x in enumerate(values):
            if i > 0:
                in_window -= counts[values[i]] if end > i else 0
            end = max(end, i + 1)
            while end < len(values) and abs(values[end] - x) <= tolerance:
                in_window += counts[values[end]]
                end += 1
            close += counts[x] * in_window
    return close / total if total else None


def agreement(question: str, level: str, table: Mapping[tuple[str, str], float],
              lists: Sequence[Sequence[str]], seed: int = 0) -> Agreement:
    """Agreement on ``question`` from (rater, stimulus) → rating, stimuli grouped in ``lists``."""
    raters = sorted({r for r, _ in table})
    stimuli = sorted({s for _, s in table})
    r_idx, s_idx = {r: i for i, r in enumerate(raters)}, {s: i for i, s in enumerate(stimuli)}
    matrix = np.full((len(raters), len(stimuli)), np.nan)
    for (r, s), v in table.items():
        matrix[r_idx[r], s_idx[s]] = v
    per_stimulus = [matrix[:, j][~np.isnan(matrix[:, j])] for j in range(len(stimuli))]
    iccs, weights = [], []
    for ids in lists:
        cols = [s_idx[s] for s in ids if s in s_idx]
        if not cols:
            continue
        sub = matrix[:, cols]
        complete = sub[~np.isnan(sub).any(axis=1)]
        found = icc2(complete.T)
        if found:
            iccs.append(found)
            weights.append(len(cols))
    icc = np.average(np.asarray(iccs), axis=0, weights=weights) if iccs else None
    values = np.asarray(list(table.values()), dtype=float)
    return Agreement(question, len(raters), len(stimuli), len(values), float(values.mean()),
                     float(values.std(ddof=1)) if len(values) > 1 else 0.0, krippendorff_alpha(matrix, level), level,
                     None if icc is None else float(icc[0]), None if icc is None else float(icc[1]),
                     split_half(per_stimulus, seed), adjacent_agreement(per_stimulus))
