"""Analyses across models, on records built by hand: kappa, items across models, splits, the
learning curve's onset rule."""

from __future__ import annotations

import math

from helpers import item_record

from lingdiag.study import across
from lingdiag.study.across import Accuracy, CurvePoint


def test_kappa_by_hand() -> None:
    # 10 items, 8 agree (po 0.8); a says x 5 times, b 7: pe = (5*7 + 5*3) / 100 = 0.5; kappa 0.3 / 0.5
    a, b = list("xxxxxyyyyy"), list("xxxxxyyxxy")
    assert math.isclose(across.kappa(a, b) or 0, 0.6)
    assert across.kappa(["x", "x"], ["x", "x"]) is None  # chance agreement is total
    assert across.kappa([], []) is None


def test_items_across_models_and_splits() -> None:
    models = {
        "a1": [item_record("i1", "good", "good"), item_record("i2", "bad", "good"), item_record("i3", "bad", "good")],
        "a2": [item_record("i1", "good", "good"), item_record("i2", "bad", "good"), item_record("i3", "good", "good")],
        "b1": [item_record("i1", "bad", "good"), item_record("i2", "bad", "good"),
               item_record("i3", "good", "good", error="timeout")],
    }
    shares = across.item_shares(models)
    assert [(s.item_id, s.right, s.wrong) for s in shares] == [
        ("i1", ("a1", "a2"), ("b1",)), ("i2", (), ("a1", "a2", "b1")), ("i3", ("a2",), ("a1",))]  # b1 failed on i3
    split = across.splits(shares, {"a1": "A", "a2": "A", "b1": "B"}, "family")
    assert [(s.item_id, s.right, s.wrong) for s in split] == [("i1", "A", "B")]
    k = across.agreement(models)
    assert k[("a1", "b1")][1] == 2  # b1's failed item is not compared


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
