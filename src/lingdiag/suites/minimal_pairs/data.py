"""BLiMP's summary files: human agreement and the paper's model rows (the pair files: ``formats``).

Beside BLiMP's paradigm files,
``human_validation_summary.csv`` (``Condition``, ``total_mean``: human agreement per paradigm)
and ``models_summary.jsonl`` (the paper's accuracy per paradigm of n-gram, LSTM,
Transformer-XL and GPT-2, the corrected 2021 numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_jsonl, read_table

GOOD, BAD = "good", "bad"
LABELS = (GOOD, BAD)
TAGS = ("UID", "linguistics_term", "field", "language")
HUMAN_FILE = "human_validation_summary.csv"
MODELS_FILE = "models_summary.jsonl"
PUBLISHED_MODELS = ("ngram", "lstm", "txl", "gpt2")
"""The model columns of ``models_summary.jsonl``."""


def read_human(path: Path) -> dict[str, float]:
    """Paradigm → human agreement (``total_mean``)."""
    columns, rows = read_table(path)
    for col in ("Condition", "total_mean"):
        if col not in columns:
            raise DatasetError("missing column", path=path, row=1, field=col)
    out = {}
    for n, row in enumerate(rows, 2):
        try:
            out[row["Condition"]] = float(row["total_mean"])
        except ValueError:
            raise DatasetError(f"not a number: {row['total_mean']!r}", path=path, row=n, field="total_mean") from None
    return out


def read_models(path: Path) -> dict[str, dict[str, float]]:
    """Paradigm → the paper's accuracy of each published model."""
    out: dict[str, dict[str, float]] = {}
    for n, row in read_jsonl(path):
        if not isinstance(row, dict) or "UID" not in row:
            raise DatasetError("missing", path=path, row=n, field="UID")
        scores = {}
        for m in PUBLISHED_MODELS:
            if m in row:
                if not isinstance(row[m], int | float) or isinstance(row[m], bool):
                    raise DatasetError(f"not a number: {row[m]!r}", path=path, row=n, field=m)
                scores[m] = float(row[m])
        out[str(row["UID"])] = scores
    return out


def published(human: Mapping[str, float], models: Mapping[str, Mapping[str, float]], uid: str) -> dict[str, float]:
    """The published numbers of paradigm ``uid``: ``human`` and each model's accuracy, where given."""
    out = dict(models.get(uid, {}))
    if uid in human:
        out["human"] = human[uid]
    return out
