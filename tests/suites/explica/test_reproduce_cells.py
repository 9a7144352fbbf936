"""A cell of ``lingdiag reproduce explica`` is a finite number beside the published one, or not
computable with its reason: never NaN or infinity printed as a value and counted as a difference
(the frequency bins of Tables 10-11 printed ``nan`` beside every published value when the dataset
was given as a path without explica_freq_4800.tsv)."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from lingdiag.records import ItemRecord
from lingdiag.suites.explica import reproduce
from lingdiag.suites.explica.data import CLASSES, CONNECTIVES
from lingdiag.suites.explica.metrics import ExplicaScores

NUMBER_LIKE_NAN = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


def _scores(**extra: Any) -> ExplicaScores:
    m: ExplicaScores = {"accuracy": 0.62, "accuracy_ci95": None, "by_class": dict.fromkeys(CLASSES, 0.5),
                        "by_type": {}, "by_order": {},
                        "n_related": 0, "n_unrelated": 0, "n_by_class": {}, "confusion": {}, "predicted": {}}
    m.update(extra)  # type: ignore[typeddict-item]
    return m


def _record(tags: dict[str, Any], gold: str | None = "so") -> ItemRecord:
    return ItemRecord("perplexity", {}, "i", {"relation": "causal_iconic", **tags}, {}, [], [], "so", {}, gold,
                      gold == "so" if gold else None)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_is_a_not_computable_cell_never_a_number(value: float) -> None:
    cells = reproduce.row_cells("table13", "ρ greedy m", ("a", "b", "c"), [0.5, value, "no bins"], [0.5, 0.4, 0.3])
    assert [c.computable for c in cells] == [True, False, False]
    assert [c.equal for c in cells] == [True, False, False]
    assert cells[1].reason == "undefined on these files (not a finite number)" and cells[2].reason == "no bins"
    printed = reproduce.markdown(cells) + reproduce.summary(cells)
    assert NUMBER_LIKE_NAN.search(printed) is None, printed
    assert "n/a (0.40)" in printed and "n/a (0.30)" in printed
    assert reproduce.summary(cells).startswith(
        "cells: 1 equal, 0 differ, 2 not computable (of 3 published cells with files); ")


def test_a_cell_cannot_hold_nan_or_lack_its_reason() -> None:
    with pytest.raises(ValueError, match="not a cell value"):
        reproduce.Cell("table10", "APS m", "Rare", math.nan, 0.55)
    with pytest.raises(ValueError, match="a value or a reason"):
        reproduce.Cell("table10", "APS m", "Rare", None, 0.55)
    with pytest.raises(ValueError, match="a value or a reason"):
        reproduce.Cell("table10", "APS m", "Rare", 0.5, 0.55, "why")


def test_aps_bins_without_frequencies_are_not_computable_with_the_reason_once() -> None:
    scored = reproduce.Scored("perplexity", "-", "-", "gemma-2-9b-it", _scores(), reproduce.NO_BINS)
    cells = [c for c in reproduce.compare([scored]) if c.table == "table10"]
    assert [(c.column, c.computable) for c in cells] == [
        ("Overall", True), ("Rare", False), ("Uncommon", False), ("Common", False), ("Frequent", False)]
    line = reproduce.summary(cells)
    assert line == ("cells: 1 equal, 0 differ, 4 not computable (of 5 published cells with files); "
                    f"4 not computable: {reproduce.NO_BINS}")
    assert "--frequencies" in line and line.count(reproduce.NO_BINS) == 1


def test_an_empty_bin_is_not_computable_and_the_others_are_compared() -> None:
    m = _scores(by_frequency_bin={"Rare": 0.59, "Common": 0.61, "Frequent": 0.64})  # Table 10: Gemma's APS
    cells = [c for c in reproduce.compare([reproduce.Scored("perplexity", "-", "-", "gemma-2-9b-it", m)])
             if c.table == "table10"]
    assert [(c.column, c.equal) for c in cells if c.computable] == [
        ("Overall", True), ("Rare", True), ("Common", True), ("Frequent", True)]
    assert [c.reason for c in cells if not c.computable] == ["no related pair in the Uncommon bin"]


def test_bins_are_missing_unless_every_related_pair_has_one() -> None:
    binned = _record({"frequency_bins": dict.fromkeys(CONNECTIVES, "Rare")})
    unbinned = _record({})
    unrelated = _record({}, gold=None)  # not in Tables 10-11: needs no bin
    three_rows = _record({"frequency_bins": dict.fromkeys(CONNECTIVES[:3], "Rare")})  # a file cut inside a pair
    assert reproduce.bins_missing([binned, unrelated]) is None
    assert reproduce.bins_missing([unbinned, unbinned, unrelated]) == reproduce.NO_BINS
    partial = "1 of the 2 related pairs lack the frequency bin of some connective row in the dataset"
    assert reproduce.bins_missing([binned, unbinned]) == partial
    assert reproduce.bins_missing([binned, three_rows]) == partial
    assert reproduce.bins_missing([_record({"frequency_bin": "Rare"})]) is None
