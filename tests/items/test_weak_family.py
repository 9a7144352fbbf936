""""Every model wrong" tells a wrong gold label from the models' weakness: where every model is weak on the
item's family (the suite's first stat tag: the imperfective suite's group), the flag says so; on a family
the models answer well it still points at the gold; human ratings are used where the items carry them."""

from __future__ import annotations

import numpy as np
from helpers import item_record, write_runs

from lingdiag.items.build import fit_runs
from lingdiag.items.flags import DEFAULT_POLICY, WEAK_EXPECTED, weak_family

STRONG, WEAK = 30, 30
"""Items of group A (the models right on about 85%) and of group C (about 25%)."""


def _answers() -> np.ndarray:
    rng = np.random.default_rng(4)
    x = np.c_[rng.random((8, STRONG)) < 0.85, rng.random((8, WEAK)) < 0.25].astype(np.int8)
    x[:, 0] = 0  # every model wrong on an item the models otherwise answer well
    x[:, STRONG] = 0  # and on one of the family every model is weak on
    x[0, 1], x[1, STRONG + 1] = 1, 1  # both families keep some mixed items
    return x


def _record(human: bool):
    def record(m: int, j: int, right: bool):
        fields = {"human": {"True": 6.0, "False": 1.0}} if human else None
        return item_record(f"i{j:05d}", "True" if right else "False", "True", fields=fields,
                           tags={"group": "A" if j < STRONG else "C", "verb_class": "Activity"})
    return record


def test_every_model_wrong_says_when_every_model_is_weak_on_the_family(tmp_path):
    (cell,) = fit_runs(write_runs(tmp_path / "runs", _answers(), record=_record(False)), "1pl").cells
    said = dict(zip(cell.item_ids, cell.item_flags("1pl", DEFAULT_POLICY), strict=True))
    strong, weak = said["i00000"][0], said[f"i{STRONG:05d}"][0]
    assert strong.startswith("every model wrong (8)") and "a wrong gold label (no human ratings" in strong
    assert "weak on" not in strong
    assert "every model is weak on its family (group=C)" in weak and "a wrong gold label" in weak
    assert "group=A" not in cell.weak_families() and "group=C" in cell.weak_families()


def test_human_agreement_and_the_weak_family_are_both_said(tmp_path):
    (cell,) = fit_runs(write_runs(tmp_path / "runs", _answers(), record=_record(True)), "1pl").cells
    said = dict(zip(cell.item_ids, cell.item_flags("1pl", DEFAULT_POLICY), strict=True))
    assert "the humans agree with the gold" in said["i00000"][0] and "weak on" not in said["i00000"][0]
    weak = said[f"i{STRONG:05d}"][0]
    assert "the humans agree with the gold" in weak and "every model is weak on its family (group=C)" in weak


def test_the_threshold_is_the_expected_count_of_items_every_model_misses():
    # 4 models right on half of 8 items: (1/2)^4 × 8 = 0.5 items all of them miss: below the threshold.
    half = np.array([[1, 0] * 4, [0, 1] * 4, [1, 1, 0, 0] * 2, [0, 0, 1, 1] * 2], dtype=np.int8)
    assert weak_family("f", half) is None
    # The same accuracies over 32 items: 2 expected, a weak family; missing answers are not counted.
    wide = np.tile(half, 4)
    found = weak_family("f", wide)
    assert found is not None and found.expected == 32 * 0.5**4 >= WEAK_EXPECTED and found.best == 0.5
    assert weak_family("f", np.full((3, 4), -1, dtype=np.int8)) is None

