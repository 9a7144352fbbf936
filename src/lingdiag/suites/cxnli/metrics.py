"""Accuracy overall, per construction and per label (with F1) of one condition (Tables 1,
4, 6; Figure 1), beside the human agreement of Table 7.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, TypedDict, cast

import numpy as np
from numpy.typing import NDArray

from lingdiag.metrics.core import Counts, accuracy, grouped, proportion_ci
from lingdiag.metrics.counts import CountMetric, Sums, ratio
from lingdiag.records import (
    UNPARSED,
    ItemRecord,
    ResultRow,
)
from lingdiag.suites.cxnli import data

HEADLINE: Final = "accuracy"
"""The paper's headline: accuracy (Exp 1 against Exp 2, Table 1)."""
HUMAN_AGREEMENT = {"1": 0.90, "2": 0.83}
"""Inter-annotator agreement taken as human accuracy (Table 1, Table 7)."""


class LabelScore(TypedDict):
    """One gold label's scores (Table 4)."""

    n: int
    """Items with this gold label."""
    accuracy: float
    """Recall; NaN without gold items."""
    precision: float
    f1: float


class CxnliScores(TypedDict):
    """What :func:`metrics` computes for one condition."""

    accuracy: float
    accuracy_ci95: list[float] | None
    by_construction: dict[str, float]
    """Construction → accuracy (Figure 1)."""
    n_by_construction: dict[str, int]
    by_label: dict[str, LabelScore]
    """Label → accuracy, precision, F1 and n (Table 4)."""
    macro_f1: float
    predicted: dict[str, float]
    """Label (and unparsed) → share of the answers (Table 6)."""
    human_agreement: float | None
    """Table 7's inter-annotator agreement of the items' experiment (None: items of both)."""
    majority_baseline: float


class CxnliMetrics(CxnliScores, Counts):
    """One condition's metrics as ``metrics.json`` and result rows hold them."""


def of(row: ResultRow) -> CxnliMetrics:
    """``row``'s metrics, typed (a CxNLI row)."""
    return cast(CxnliMetrics, row.metrics)


def label_scores(records: Sequence[ItemRecord]) -> dict[str, LabelScore]:
    """Per gold label: n, accuracy (recall), precision and F1; unparsed answers count as wrong.

    A label never predicted has precision 0 (so F1 0) when it has gold items; a label with
    neither gold items nor predictions has NaN scores.
    """
    out: dict[str, LabelScore] = {}
    for lab in data.LABELS:
        tp = sum(r.gold == lab and r.label == lab for r in records)
        n_gold = sum(r.gold == lab for r in records)
        n_pred = sum(r.label == lab for r in records)
        if not n_gold and not n_pred:
            out[lab] = {"n": 0, "accuracy": math.nan, "precision": math.nan, "f1": math.nan}
            continue
        recall = tp / n_gold if n_gold else 0.0
        precision = tp / n_pred if n_pred else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out[lab] = {"n": n_gold, "accuracy": recall if n_gold else math.nan, "precision": precision, "f1": f1}
    return out


def _label_counts(r: ItemRecord) -> list[float]:
    return [float(x) for lab in data.LABELS for x in (r.gold == lab and r.label == lab, r.gold == lab, r.label == lab)]


def _macro_f1(s: Sums) -> NDArray[np.float64]:
    # label_scores' rules, vectorised: recall (precision) 0 without gold items (predictions),
    # F1 0 when both are 0, and a label with neither gold items nor predictions left out.
    tp, n_gold, n_pred = s[..., 0::3], s[..., 1::3], s[..., 2::3]
    recall = np.where(n_gold > 0, ratio(tp, n_gold), 0.0)
    precision = np.where(n_pred > 0, ratio(tp, n_pred), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    defined = (n_gold > 0) | (n_pred > 0)
    return ratio(np.where(defined, f1, 0.0).sum(axis=-1), defined.sum(axis=-1).astype(float))


MACRO_F1 = CountMetric(_label_counts, _macro_f1, 3 * len(data.LABELS))
"""Macro F1 over the labels (Table 4)."""
PAIRED = {"macro_f1": MACRO_F1}
"""The rates and gaps ``lingdiag compare`` tests by paired permutation (``Suite.paired_metrics``);
accuracy has McNemar's test."""


def metrics(records: Sequence[ItemRecord]) -> CxnliScores:
    """Accuracy overall, per construction and per label (with F1) of one condition."""
    by_label = label_scores(records)
    exps = {str(r.tags.get("exp")) for r in records}  # the items' experiment, imported or run
    n = len(records)
    return {
        "accuracy": accuracy(records),
        "accuracy_ci95": proportion_ci(records, lambda r: bool(r.correct)) if records else None,
        "by_construction": grouped(accuracy, "construction")(records),
        "n_by_construction": {k: len(v) for k, v in _by(records, "construction").items()},
        "by_label": by_label,
        "macro_f1": MACRO_F1(records),
        "predicted": {lab: (sum(r.label == lab for r in records) / n if n else math.nan)
                      for lab in (*data.LABELS, UNPARSED)},
        "human_agreement": HUMAN_AGREEMENT.get(exps.pop()) if len(exps) == 1 else None,
        # Always answering the commonest gold label of these items: 1/3 on all of Exp 1, 0.49 on Exp 2.
        "majority_baseline": max((b["n"] for b in by_label.values()), default=0) / n if n else math.nan,
    }


def _by(records: Sequence[ItemRecord], tag: str) -> dict[str, list[ItemRecord]]:
    out: dict[str, list[ItemRecord]] = {}
    for r in records:
        out.setdefault(str(r.tags.get(tag)), []).append(r)
    return dict(sorted(out.items()))
