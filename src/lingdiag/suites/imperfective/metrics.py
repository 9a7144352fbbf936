"""§4.3 and Appendix E metrics of one condition, and their names.

The names are constants so that every reader (tables, figures, analyses) fails loudly on
a rename instead of drawing an empty bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, Required, TypedDict, cast

from lingdiag.metrics.core import BOOTSTRAP, CI_METHODS, Counts, accuracy, grouped, proportion_ci, rate
from lingdiag.metrics.counts import CountMetric, ratio, share
from lingdiag.metrics.stats import difference_ci
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.suites.imperfective.data import TELIC_CLASSES

GROUPS = ("A", "B", "C", "D")
AccKey = Literal["acc_A", "acc_B", "acc_C", "acc_D"]
ACC: dict[str, AccKey] = {"A": "acc_A", "B": "acc_B", "C": "acc_C", "D": "acc_D"}
"""Accuracy per group (Table 3)."""
TBR_C: Final = "tbr_C"
"""Teleological Bias Rate: share of group C answered "True" (eq. 1)."""
TBR_C_CI: Final = "tbr_C_ci95"
DELTA_AA: Final = "delta_aa"
"""Aspectual Awareness Gap: Acc D - TBR_C (eq. 2)."""
DELTA_AA_CI: Final = "delta_aa_ci95"
"""Bootstrap interval of Δ_AA (groups D and C resampled independently)."""
HEADLINE = TBR_C
"""The paper's headline: the telicity bias on group C (lower is better)."""
FALSE_RATE_C: Final = "false_rate_C"
"""Share of group C answered "False" (Table 6)."""
BY_CLASS: Final = "by_class"
"""``{ACC["A"] | ACC["C"] | TBR_C: {telic verb class: value}}`` (Tables 7-18)."""
ClassKey = Literal["acc_A", "acc_C", "tbr_C"]
CLASS_METRICS: tuple[ClassKey, ...] = ("acc_A", "acc_C", "tbr_C")
N_BY_GROUP: Final = "n_by_group"


class ImperfectiveScores(TypedDict, total=False):
    """What :func:`metrics` computes for one condition (a group's interval only where it has items)."""

    acc_A: Required[float]
    acc_B: Required[float]
    acc_C: Required[float]
    acc_D: Required[float]
    acc_A_ci95: list[float]
    acc_B_ci95: list[float]
    acc_C_ci95: list[float]
    acc_D_ci95: list[float]
    tbr_C: Required[float]
    tbr_C_ci95: Required[list[float] | None]
    delta_aa: Required[float]
    delta_aa_ci95: Required[list[float] | None]
    ci95_methods: Required[dict[str, str]]
    false_rate_C: Required[float]
    by_class: Required[dict[ClassKey, dict[str, float]]]
    n_by_group: Required[dict[str, int]]


class ImperfectiveMetrics(ImperfectiveScores, Counts, total=False):
    """One condition's metrics as ``metrics.json`` and result rows hold them."""


def of(row: ResultRow) -> ImperfectiveMetrics:
    """``row``'s metrics, typed (an ImperfectiveNLI row)."""
    return cast(ImperfectiveMetrics, row.metrics)


def _in(group: str) -> CountMetric:
    return share(lambda r: r.tags["group"] == group and r.correct is not None, lambda r: bool(r.correct))


ACC_OF = {g: _in(g) for g in GROUPS}
"""Accuracy of group g: correct / scored items of g (Table 3)."""
TBR_OF = share(lambda r: r.tags["group"] == "C", lambda r: r.label == "True")
"""TBR_C (eq. 1): unparsed answers count in the denominator, as every group C item does."""
FALSE_RATE_OF = share(lambda r: r.tags["group"] == "C", lambda r: r.label == "False")
DELTA_AA_OF = CountMetric(lambda r: (*ACC_OF["D"].counts(r), *TBR_OF.counts(r)),
                          lambda s: ratio(s[..., 0], s[..., 1]) - ratio(s[..., 2], s[..., 3]), 4)
"""Δ_AA = Acc D − TBR_C (eq. 2)."""
PAIRED: dict[str, CountMetric] = {**{ACC[g]: ACC_OF[g] for g in GROUPS}, TBR_C: TBR_OF, DELTA_AA: DELTA_AA_OF,
                                  FALSE_RATE_C: FALSE_RATE_OF}
"""The rates and gaps ``lingdiag compare`` tests by paired permutation (``Suite.paired_metrics``)."""


def metrics(records: Sequence[ItemRecord]) -> ImperfectiveScores:
    """§4.3 and Appendix E metrics of one condition."""
    by_group = {g: [r for r in records if r.tags["group"] == g] for g in GROUPS}
    c = by_group["C"]
    telic = {g: [r for r in by_group[g] if r.tags["verb_class"] in TELIC_CLASSES] for g in "AC"}

    def ci(g: str) -> list[float]:
        return proportion_ci(by_group[g], lambda r: bool(r.correct))

    scores: ImperfectiveScores = {
        "acc_A": ACC_OF["A"](records), "acc_B": ACC_OF["B"](records), "acc_C": ACC_OF["C"](records),
        "acc_D": ACC_OF["D"](records),
        TBR_C: TBR_OF(records),
        TBR_C_CI: proportion_ci(c, lambda r: r.label == "True") if c else None,
        DELTA_AA: DELTA_AA_OF(records),
        DELTA_AA_CI: difference_ci([bool(r.correct) for r in by_group["D"]], [r.label == "True" for r in c]),
        CI_METHODS: {DELTA_AA_CI: BOOTSTRAP},
        FALSE_RATE_C: FALSE_RATE_OF(records),
        BY_CLASS: {
            "acc_A": grouped(accuracy, "verb_class")(telic["A"]),
            "acc_C": grouped(accuracy, "verb_class")(telic["C"]),
            "tbr_C": grouped(rate("True"), "verb_class")(telic["C"]),
        },
        N_BY_GROUP: {g: len(rs) for g, rs in by_group.items()},
    }
    # A group's interval only where it has items (key order: metrics.json is written with sorted keys).
    if by_group["A"]:
        scores["acc_A_ci95"] = ci("A")
    if by_group["B"]:
        scores["acc_B_ci95"] = ci("B")
    if by_group["C"]:
        scores["acc_C_ci95"] = ci("C")
    if by_group["D"]:
        scores["acc_D_ci95"] = ci("D")
    return scores
