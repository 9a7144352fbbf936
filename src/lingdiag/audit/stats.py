"""Tests between classes of item-level scores.

ExpliCa §3.1 reports a Wilcoxon test across its CAUSAL / TEMPORAL / UNRELATED groups
(W = 41,576 for LMI): for independent groups that is the Wilcoxon rank-sum test, i.e.
Mann-Whitney U (R's ``wilcox.test`` prints U as W). We run it two-sided on every pair of
classes, with the rank-biserial correlation as effect size, and adjust the pairs' p-values
with Holm's step-down method (family = the pairs of one measure), calling a pair different
when the adjusted p < .05. Kruskal-Wallis H with epsilon-squared (H / (n - 1)) is the omnibus
test over all classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from lingdiag.metrics.stats import holm

ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class ClassTest:
    """Mann-Whitney U between two classes."""

    measure: str
    a: str
    b: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    u: float
    """U of class ``a``."""
    p: float
    p_holm: float
    rank_biserial: float
    """2U / (n_a n_b) - 1: +1 when every ``a`` score exceeds every ``b`` score."""
    verdict: str


@dataclass(frozen=True, slots=True)
class Omnibus:
    """Kruskal-Wallis test over all classes of one measure."""

    measure: str
    h: float
    p: float
    epsilon_squared: float
    verdict: str


def _verdict(p: float) -> str:
    return "differ" if p < ALPHA else "no significant difference"


def compare_classes(measure: str, scores: Mapping[str, Sequence[float]]) -> tuple[Omnibus | None, list[ClassTest]]:
    """The omnibus test and the pairwise tests of ``scores`` (class → item scores).

    Classes with fewer than two scores are left out; with fewer than two classes left there
    is nothing to test.
    """
    import numpy as np
    from scipy.stats import kruskal, mannwhitneyu

    groups = {c: list(v) for c, v in sorted(scores.items()) if len(v) >= 2}
    if len(groups) < 2:
        return None, []
    everything = [x for v in groups.values() for x in v]
    if len(set(everything)) == 1:  # all tied: no ranks to compare
        omni = Omnibus(measure, 0.0, 1.0, 0.0, _verdict(1.0))
    else:
        h, p = kruskal(*groups.values())
        omni = Omnibus(measure, float(h), float(p), float(h) / (len(everything) - 1), _verdict(float(p)))
    raw = []
    for a, b in combinations(groups, 2):
        u, p = mannwhitneyu(groups[a], groups[b], alternative="two-sided")
        raw.append((a, b, float(u), float(p)))
    adjusted = holm([r[3] for r in raw])
    tests = [ClassTest(measure, a, b, len(groups[a]), len(groups[b]), float(np.median(groups[a])),
                       float(np.median(groups[b])), u, p, padj, 2 * u / (len(groups[a]) * len(groups[b])) - 1,
                       _verdict(padj))
             for (a, b, u, p), padj in zip(raw, adjusted, strict=True)]
    return omni, tests
