"""Accuracy overall, per construction and per label (with F1) of one condition (Tables 1,
4, 6; Figure 1), beside the human agreement of Table 7.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lingdiag.metrics.core import accuracy, grouped, proportion_ci
from lingdiag.records import (
    UNPARSED,
    ItemRecord,
)
from lingdiag.suites.cxnli import data

HUMAN_AGREEMENT = {"1": 0.90, "2": 0.83}
"""Inter-annotator agreement taken as human accuracy (Table 1, Table 7)."""


def label_scores(records: Sequence[ItemRecord]) -> dict[str, dict[str, float]]:
    """Per gold label: n, accuracy (recall), precision and F1; unparsed answers count as wrong.

    A label never predicted has precision 0 (so F1 0) when it has gold items; a label with
    neither gold items nor predictions has NaN scores.
    """
    out = {}
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


def metrics(records: Sequence[ItemRecord]) -> dict[str, Any]:
    """Accuracy overall, per construction and per label (with F1) of one condition."""
    by_label = label_scores(records)
    f1s = [s["f1"] for s in by_label.values() if not math.isnan(s["f1"])]
    exps = {str(r.tags.get("exp")) for r in records}  # the items' experiment, imported or run
    n = len(records)
    return {
        "accuracy": accuracy(records),
        "accuracy_ci95": proportion_ci(records, lambda r: bool(r.correct)) if records else None,
        "by_construction": grouped(accuracy, "construction")(records),
        "n_by_construction": {k: len(v) for k, v in _by(records, "construction").items()},
        "by_label": by_label,
        "macro_f1": sum(f1s) / len(f1s) if f1s else math.nan,
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
