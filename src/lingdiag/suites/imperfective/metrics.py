"""§4.3 and Appendix E metrics of one condition, and their names.

The names are constants so that every reader (tables, figures, analyses) fails loudly on
a rename instead of drawing an empty bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lingdiag.metrics.core import BOOTSTRAP, CI_METHODS, accuracy, grouped, proportion_ci, rate
from lingdiag.metrics.counts import CountMetric, ratio, share
from lingdiag.metrics.stats import difference_ci
from lingdiag.records import ItemRecord
from lingdiag.suites.imperfective.data import TELIC_CLASSES

GROUPS = ("A", "B", "C", "D")
ACC = {g: f"acc_{g}" for g in GROUPS}
"""Accuracy per group (Table 3)."""
ACC_CI = {g: f"acc_{g}_ci95" for g in GROUPS}
TBR_C = "tbr_C"
"""Teleological Bias Rate: share of group C answered "True" (eq. 1)."""
TBR_C_CI = "tbr_C_ci95"
DELTA_AA = "delta_aa"
"""Aspectual Awareness Gap: Acc D - TBR_C (eq. 2)."""
DELTA_AA_CI = "delta_aa_ci95"
"""Bootstrap interval of Δ_AA (groups D and C resampled independently)."""
HEADLINE = TBR_C
"""The paper's headline: the telicity bias on group C (lower is better)."""
FALSE_RATE_C = "false_rate_C"
"""Share of group C answered "False" (Table 6)."""
BY_CLASS = "by_class"
"""``{ACC["A"] | ACC["C"] | TBR_C: {telic verb class: value}}`` (Tables 7-18)."""
CLASS_METRICS = (ACC["A"], ACC["C"], TBR_C)
N_BY_GROUP = "n_by_group"


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
PAIRED = {**{ACC[g]: ACC_OF[g] for g in GROUPS}, TBR_C: TBR_OF, DELTA_AA: DELTA_AA_OF, FALSE_RATE_C: FALSE_RATE_OF}
"""The rates and gaps ``lingdiag compare`` tests by paired permutation (``Suite.paired_metrics``)."""


def metrics(records: Sequence[ItemRecord]) -> dict[str, Any]:
    """§4.3 and Appendix E metrics of one condition."""
    by_group = {g: [r for r in records if r.tags["group"] == g] for g in GROUPS}
    c = by_group["C"]
    telic = {g: [r for r in by_group[g] if r.tags["verb_class"] in TELIC_CLASSES] for g in "AC"}
    return {
        **{ACC[g]: ACC_OF[g](records) for g in GROUPS},
        **{ACC_CI[g]: proportion_ci(by_group[g], lambda r: bool(r.correct)) for g in GROUPS if by_group[g]},
        TBR_C: TBR_OF(records),
        TBR_C_CI: proportion_ci(c, lambda r: r.label == "True") if c else None,
        DELTA_AA: DELTA_AA_OF(records),
        DELTA_AA_CI: difference_ci([bool(r.correct) for r in by_group["D"]], [r.label == "True" for r in c]),
        CI_METHODS: {DELTA_AA_CI: BOOTSTRAP},
        FALSE_RATE_C: FALSE_RATE_OF(records),
        BY_CLASS: {
            ACC["A"]: grouped(accuracy, "verb_class")(telic["A"]),
            ACC["C"]: grouped(accuracy, "verb_class")(telic["C"]),
            TBR_C: grouped(rate("True"), "verb_class")(telic["C"]),
        },
        N_BY_GROUP: {g: len(rs) for g, rs in by_group.items()},
    }
