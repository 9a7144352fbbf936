"""Analyses across models, on cell tables built by hand: kappa beside raw agreement and prevalence,
items across models, splits, the learning curve's onset rule, the order of models and the paired
tests' two Holm families."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from lingdiag.reading.summary import NONE, NOT_GRADED, RIGHT, WRONG
from lingdiag.study import across
from lingdiag.study.across import Accuracy, CellTable, CurvePoint

LABELS = ["good", "bad", "x", "y"]


def _codes(text: str) -> np.ndarray:
    return np.array([LABELS.index(c) for c in text], np.int32)


def _table(cells: Mapping[str, Sequence[str | None]]) -> CellTable:
    """Models → per item its label (None: a backend error; gold is "good"), in item order."""
    models = list(cells)
    n = len(next(iter(cells.values())))
    outcome = np.full((n, len(models)), NOT_GRADED, np.int8)
    label = np.full((n, len(models)), NONE, np.int32)
    for j, m in enumerate(models):
        for i, lab in enumerate(cells[m]):
            if lab is None:
                continue
            label[i, j] = LABELS.index(lab)
            outcome[i, j] = RIGHT if lab == "good" else WRONG
    return CellTable(("s", "c"), models, np.arange(n, dtype=np.int32), outcome, label)


def test_kappa_by_hand() -> None:
    # 10 items, 8 agree (po 0.8); a says x 5 times, b 7: pe = (5*7 + 5*3) / 100 = 0.5; kappa 0.3 / 0.5
    a, b = _codes("xxxxxyyyyy"), _codes("xxxxxyyxxy")
    assert math.isclose(across.kappa(a, b) or 0, 0.6)
    assert across.kappa(_codes("xx"), _codes("xx")) is None  # chance agreement is total
    assert across.kappa(_codes(""), _codes("")) is None


def test_kappa_near_zero_is_shown_with_raw_agreement_and_prevalence() -> None:
    """The issue's case: two models agreeing on 29 of 30 items, one of them a constant labeller."""
    table = _table({"a": ["good"] * 30, "b": ["good"] * 29 + ["bad"]})
    agreed = across.agreement(table)[("a", "b")]
    assert (agreed.kappa, agreed.agree, agreed.n) == (0.0, 29, 30)
    assert across.prevalence(table, "b", LABELS) == [("good", 29), ("bad", 1)]


def test_items_across_models_and_splits() -> None:
    table = _table({"a1": ["good", "bad", "bad"],
                    "a2": ["good", "bad", "good"],
                    "b1": ["bad", "bad", None]})  # b1 failed on item 3
    shares = across.item_shares(table)
    assert shares.right.tolist() == [2, 0, 1] and shares.graded.tolist() == [3, 3, 2]
    split = across.splits(table, {"a1": "A", "a2": "A", "b1": "B"}, "family")
    assert [(s.item, s.right, s.wrong) for s in split] == [(0, "A", "B")]
    assert across.agreement(table)[("a1", "b1")].n == 2  # b1's failed item is not compared


def _point(step: int, right: int, n: int = 40, missing: str | None = None) -> CurvePoint:
    return CurvePoint("m", f"m@step{step}", step, None, Accuracy(right, n), 0.5, missing)


def _gone(step: int) -> CurvePoint:
    return _point(step, 0, 0, "not measured (gave up)")


def test_onset_first_above_chance_and_stability() -> None:
    found = across.onset([_point(1, 20), _point(2, 32), _point(3, 35)])
    assert found.first is not None and found.first.step == 2 and found.stable is True and not found.before
    found = across.onset([_point(1, 20), _point(2, 32), _point(3, 21)])
    assert found.first is not None and found.first.step == 2 and found.stable is False
    found = across.onset([_point(1, 20), _point(2, 26)])  # 26/40: Wilson's lower end 0.49
    assert found.first is None and found.stable is None and not found.before


def test_no_onset_or_stability_that_a_missing_checkpoint_could_change() -> None:
    """Issue 57: steps 1 and 3 never ran, step 2 got all right: not 'first appears at step 2, stable'."""
    found = across.onset([_gone(1), _point(2, 40), _gone(3)])
    assert found.first is not None and found.first.step == 2
    assert [p.step for p in found.before] == [1] and found.stable is None and [p.step for p in found.after] == [3]
    # A measured later checkpoint without the effect settles it whatever is missing.
    found = across.onset([_point(1, 20), _point(2, 40), _gone(3), _point(4, 20)])
    assert found.stable is False and not found.before
    # Absent at every measured checkpoint: where it could appear is not known.
    found = across.onset([_point(1, 20), _gone(2)])
    assert found.first is None and [p.step for p in found.before] == [2]
    assert not _gone(2).present and not _point(3, 40, 40, "condition not run").present


def test_paired_tests_direction_and_both_holm_families() -> None:
    pytest.importorskip("statsmodels")
    rng = np.random.default_rng(0)
    tables = {}
    for condition in ("c1", "c2"):
        cells = {m: ["good" if rng.random() < p else "bad" for _ in range(80)]
                 for m, p in (("A", 0.8), ("B", 0.5), ("C", 0.55))}
        built = _table(cells)
        tables[("s", condition)] = CellTable(("s", condition), built.models, built.items, built.outcome, built.label)
    tests, skipped = across.paired_tests(tables, [across.Pair("chosen", "A", "B", "A vs B"),
                                                    across.Pair("chosen", "C", "B", "C vs B")])
    assert not skipped and len(tests) == 4
    for t in tests:
        assert t.test.diff == pytest.approx(t.test.acc_a - t.test.acc_b)  # A − B
    ab = [t for t in tests if t.a == "A"]
    ps = sorted(t.test.p for t in ab)
    assert sorted(t.test.p_holm for t in ab) == pytest.approx([min(1, 2 * ps[0]), max(min(1, 2 * ps[0]), ps[1])])
    assert all(t.p_table >= t.test.p_holm for t in tests)  # four rows: a larger family
