"""The policy sweep's table, from result rows alone: spread, flips against the first policy, flips anywhere."""

from __future__ import annotations

import hashlib

from lingdiag.analysis.sweep import OUTCOMES, section
from lingdiag.conditions.scoring_policy import AXIS
from lingdiag.records import ResultRow


def row(policy: str, correct: str, accuracy: float, ids: str = "a\nb\nc\nd") -> ResultRow:
    digest = hashlib.sha256(ids.encode()).hexdigest()
    return ResultRow("m", policy, {AXIS: policy, "method": "simple"},
                     {"accuracy": accuracy, OUTCOMES: {"ids_sha256": digest, "correct": correct}})


def test_spread_and_flips() -> None:
    text = section([row("lingdiag", "1100", 0.5), row("lm-eval", "1010", 0.5), row("minicons", "1111", 1.0)],
                   "accuracy", "accuracy")
    assert "accuracy moves by 0.500 between policies" in text
    assert "75.0% of the items change outcome under some policy" in text  # b, c and d differ somewhere
    assert "| lm-eval | 0.50 | 0.00 | 0.50 |" in text  # c and d flipped against lingdiag
    assert "| minicons | 1.00 | 0.50 | 0.50 |" in text


def test_different_item_sets_are_not_compared() -> None:
    text = section([row("lingdiag", "11", 1.0, "a\nb"), row("lm-eval", "10", 0.5, "a\nc")], "accuracy", "accuracy")
    assert "change outcome" not in text and "| lm-eval | 0.50 | -0.50 | – |" in text


def test_one_policy_gives_no_section() -> None:
    assert section([row("lingdiag", "1", 1.0, "a")], "accuracy", "accuracy") == ""
