"""Human ratings beside the gold: agreement, ties, disagreement, and ratings that are no numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import IMPERFECTIVE_TAGS, item_record

from lingdiag.errors import DatasetError
from lingdiag.items.human import agreement, from_file, from_tables
from lingdiag.reading import load_run
from lingdiag.reading.item_table import tables_of
from lingdiag.rundir import write_imported


@pytest.mark.parametrize(("gold", "means", "expected"), [
    ("a", {"a": 7.0, "b": 5.0}, ("agrees", 2.0, "a")),
    ("a", {"a": 5.0, "b": 5.0, "c": 1.0}, ("ties", 0.0, "b")),
    ("a", {"a": 3.0, "b": 5.0, "c": 6.0}, ("disagrees", -3.0, "c")),
])
def test_agreement(gold, means, expected):
    h = agreement(gold, means)
    assert h is not None and (h.verdict, h.margin, h.preferred) == expected


def test_no_agreement_without_a_rated_gold_or_another_label():
    assert agreement("x", {"a": 1.0, "b": 2.0}) is None and agreement("a", {"a": 1.0}) is None


def test_ratings_that_are_no_numbers_give_a_note_and_no_agreement(tmp_path: Path):
    given = {"ok": {"True": 6, "False": 2}, "nan": {"True": "nan", "False": 2}, "none": {"True": None}, "plain": None}
    records = [item_record(i, "True", "True", tags=IMPERFECTIVE_TAGS, fields={"human": h} if h else None)
               for i, h in given.items()]
    write_imported(tmp_path / "r", suite="imperfective", model="m", dataset="builtin", records=records,
                   provenance={"file": "x", "sha256": ""})
    ratings, notes = from_tables(tables_of([load_run(tmp_path / "r")]))
    assert ratings == {("imperfective", "ok"): {"True": 6.0, "False": 2.0}}
    assert len(notes) == 2 and all("not a finite number" in n and "\n" not in n for n in notes)


@pytest.mark.parametrize(("text", "expected"), [
    ("id,mean_a\nx,inf\n", "row 2, field 'mean_a': 'inf' is not a finite number"),
    ("id,mean_a\nx,1\nx,2\n", "row 3, field 'id': item 'x' is listed twice"),
    ("item,score\nx,1\n", "expected an 'id' column and mean_<label> columns"),
])
def test_a_bad_ratings_file_is_one_line(tmp_path: Path, text, expected):
    (tmp_path / "h.csv").write_text(text)
    with pytest.raises(DatasetError) as e:
        from_file(tmp_path / "h.csv")
    assert expected in str(e.value) and "\n" not in str(e.value)
