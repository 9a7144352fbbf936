"""Accuracy (APS for perplexity) per TYPE × ORDER, confusion matrices, frequency bins,
Spearman ρ with human ratings and rating distributions (§5, Appendix G-I).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, Required, TypedDict, cast

from lingdiag.metrics import stats
from lingdiag.metrics.core import CI_METHODS, Counts, accuracy, proportion_ci
from lingdiag.metrics.correlation import SPEARMAN_BOOTSTRAP, spearman_ci
from lingdiag.metrics.counts import CountMetric, ratio
from lingdiag.records import (
    ItemRecord,
    ResultRow,
)
from lingdiag.suites.explica import data

ACCURACY: Final = "accuracy"
HEADLINE = ACCURACY
"""The paper's headline: accuracy over all related pairs (Tables 6-8)."""
"""Accuracy over causal and temporal pairs (APS for perplexity; Tables 6-8)."""
BY_CLASS: Final = "by_class"
"""Accuracy per TYPE × ORDER class."""
N_RELATED: Final = "n_related"
SPEARMAN: Final = "spearman"
"""``{class | "unrelated" | "all": {"rho", "p", "n", "rho_ci95"}}`` (Table 13); unreadable ratings
(-1) are points, as in the authors' notebooks (plots_distribution_and_correlation.py). The
interval resamples pairs with their four sentences (``SPEARMAN_BOOTSTRAP``)."""
SPEARMAN_RATED: Final = "spearman_rated"
"""The same without the unreadable ratings (GPT-4o zero-shot greedy: ρ 0.46 with them, 0.78 without)."""
BY_FREQUENCY_BIN: Final = "by_frequency_bin"
"""Accuracy per frequency bin (Table 10), where the data has bins."""
CONFUSION: Final = "confusion"
"""Gold connective → predicted connective → count, per class (Fig. 12)."""
RATING_DISTRIBUTION: Final = "rating_distribution"
"""Model and human rating counts (Fig. 5)."""
RATING_TIE_RATE: Final = "rating_tie_rate"


class ExplicaScores(TypedDict, total=False):
    """What :func:`metrics` computes for one condition; the correlation and rating parts only
    where the condition has scores or ratings, the bins only where the data has bins.
    """

    accuracy: Required[float]
    accuracy_ci95: Required[list[float] | None]
    by_class: Required[dict[str, float]]
    by_type: Required[dict[str, float]]
    by_order: Required[dict[str, float]]
    n_related: Required[int]
    n_unrelated: Required[int]
    n_by_class: Required[dict[str, int]]
    confusion: Required[dict[str, dict[str, int]]]
    predicted: Required[dict[str, int]]
    by_frequency_bin: dict[str, float]
    spearman: dict[str, dict[str, Any]]
    ci95_methods: dict[str, str]
    spearman_rated: dict[str, dict[str, Any]]
    rating_missing_rate: float
    rating_tie_rate: float
    rating_distribution: dict[str, dict[str, dict[str, int]]]


class ExplicaMetrics(ExplicaScores, Counts, total=False):
    """One condition's metrics as ``metrics.json`` and result rows hold them."""


def of(row: ResultRow) -> ExplicaMetrics:
    """``row``'s metrics, typed (an ExpliCa row)."""
    return cast(ExplicaMetrics, row.metrics)


def _missing(r: ItemRecord) -> tuple[float, float]:
    ratings = list(r.detail.get("ratings", {}).values())
    return float(sum(v == -1 for v in ratings)), float(len(ratings))


RATING_MISSING = CountMetric(_missing, lambda s: ratio(s[..., 0], s[..., 1]), 2)
"""Share of the ratings that could not be read (-1), over every rating of the rated pairs."""
RATING_TIES = CountMetric(lambda r: (float(bool(r.detail.get("tied"))), 1.0) if
                          "ratings" in r.detail else (0.0, 0.0), lambda s: ratio(s[..., 0], s[..., 1]), 2)
"""Share of the rated pairs whose best rating is shared by several connectives."""
PAIRED = {"rating_missing_rate": RATING_MISSING, RATING_TIE_RATE: RATING_TIES}
"""The rates ``lingdiag compare`` tests by paired permutation (``Suite.paired_metrics``); accuracy
and APS have McNemar's test."""


def spearman(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """Spearman ρ and its p-value; NaN when fewer than 3 pairs or a side is constant."""
    rho = stats.spearman(xs, ys)
    if rho is None:
        return {"rho": math.nan, "p": math.nan, "n": len(xs)}
    return {"rho": round(rho.r, 6), "p": rho.p, "n": rho.n}


def _scores(r: ItemRecord) -> dict[str, float] | None:
    for key in ("ratings", "perplexity", "scores"):
        if key in r.detail:
            return {c: float(v) for c, v in r.detail[key].items()}
    return None


def _correlations(records: Sequence[ItemRecord], *, rated_only: bool = False,
                  interval: bool = False) -> dict[str, dict[str, Any]]:
    groups: dict[str, tuple[list[float], list[float], list[str]]] = {
        g: ([], [], []) for g in (*data.CLASSES, data.UNRELATED, "all")}
    for r in records:
        scores = _scores(r)
        if scores is None:
            continue
        for c, v in scores.items():
            if (rated_only and v == -1) or math.isnan(v):
                continue
            for g in (r.tags["relation"], "all"):
                groups[g][0].append(v)
                groups[g][1].append(float(r.fields["human"][c]))
                groups[g][2].append(r.item_id)
    out: dict[str, dict[str, Any]] = {}
    for g, (xs, ys, items) in groups.items():
        out[g] = spearman(xs, ys)
        if interval:
            out[g]["rho_ci95"] = spearman_ci(xs, ys, items)
    return out


def _distributions(records: Sequence[ItemRecord]) -> dict[str, dict[str, dict[str, int]]]:
    out: dict[str, dict[str, dict[str, int]]] = {}
    for subset, related in (("related", True), ("unrelated", False)):
        model: Counter[str] = Counter()
        human: Counter[str] = Counter()
        for r in records:
            if (r.gold is not None) == related and "ratings" in r.detail:
                model.update(str(v) for v in r.detail["ratings"].values())
                human.update(str(min(10, max(1, math.floor(float(v) + 0.5)))) for v in r.fields["human"].values())
        keys = ["-1", *map(str, range(1, 11))]
        out[subset] = {"model": {k: model.get(k, 0) for k in keys}, "human": {k: human.get(k, 0) for k in keys[1:]}}
    return out


def _by_frequency_bin(related: Sequence[ItemRecord]) -> dict[str, float]:
    """Accuracy per bin. With per-row bins (tag ``frequency_bins``, the official data) a pair
    counts once in the bin of each of its four connectives, as in Tables 10-11; a per-pair
    ``frequency_bin`` column of a user's file counts it once.
    """
    hits: dict[str, list[bool]] = {}
    for r in related:
        per_row = r.tags.get("frequency_bins")
        bins = (list(per_row.values()) if isinstance(per_row, dict)
                else [str(r.tags["frequency_bin"])] if "frequency_bin" in r.tags else [])
        for b in bins:
            hits.setdefault(b, []).append(bool(r.correct))
    order = list(data.FREQUENCY_BINS.values())
    return {b: sum(v) / len(v) for b, v in sorted(hits.items(), key=lambda kv: (
        order.index(kv[0]) if kv[0] in order else len(order), kv[0]))}


def metrics(records: Sequence[ItemRecord]) -> ExplicaScores:
    """Accuracy (APS for perplexity) over causal/temporal pairs, per class, confusion
    matrix, per frequency bin; for ratings and perplexities also Spearman ρ and (ratings)
    the distributions. Pure: recomputed offline from ``items.jsonl``.
    """
    related = [r for r in records if r.gold is not None]
    by_class = {c: [r for r in related if r.tags["relation"] == c] for c in data.CLASSES}
    confusion: dict[str, Counter[str]] = {}
    for r in records:
        predicted = data.class_of(r.label) if r.label in data.RELATION else r.label
        confusion.setdefault(r.tags["relation"], Counter())[predicted] += 1
    out: ExplicaScores = {
        ACCURACY: accuracy(related),
        "accuracy_ci95": proportion_ci(related, lambda r: bool(r.correct)) if related else None,
        BY_CLASS: {c: accuracy(rs) for c, rs in by_class.items()},
        "by_type": {t: accuracy([r for r in related if r.tags["type"] == t]) for t in ("causal", "temporal")},
        "by_order": {o: accuracy([r for r in related if r.tags["order"] == o]) for o in ("iconic", "anti-iconic")},
        N_RELATED: len(related), "n_unrelated": len(records) - len(related),
        "n_by_class": {c: len(rs) for c, rs in by_class.items()},
        CONFUSION: {g: dict(sorted(c.items())) for g, c in sorted(confusion.items())},
        "predicted": dict(sorted(Counter(r.label for r in records).items())),
    }
    if any("frequency_bins" in r.tags or "frequency_bin" in r.tags for r in related):
        out[BY_FREQUENCY_BIN] = _by_frequency_bin(related)
    if any(_scores(r) is not None for r in records):
        # Intervals on Table 13's cells only: each costs a vectorised bootstrap, and the rated-only
        # variant is a side note.
        out[SPEARMAN] = _correlations(records, interval=True)
        out[CI_METHODS] = {SPEARMAN: SPEARMAN_BOOTSTRAP}
    rated = [r for r in records if "ratings" in r.detail]
    if rated:
        out[SPEARMAN_RATED] = _correlations(rated, rated_only=True)
        out["rating_missing_rate"] = RATING_MISSING(rated)
        out[RATING_TIE_RATE] = RATING_TIES(rated)
        out[RATING_DISTRIBUTION] = _distributions(rated)
    return out
