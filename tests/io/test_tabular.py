"""The one reader of each kind of user file: JSON, JSON lines and CSV/TSV, with one error wording."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_json, read_jsonl, read_table


def test_a_row_longer_than_its_header_is_a_one_line_error_naming_row_and_cells(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,answer\nx1,True\nx2,False,oops,=1+1\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        read_table(path)
    assert str(e.value) == f"{path}, row 3: 4 cells but the header has 2 (extra: 'oops', '=1+1')"


def test_short_rows_blank_lines_tabs_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("\ufeff id \tanswer\tnote\nx1\t'=SUM(A1)\n\nx2\tFalse\tok\n", encoding="utf-8")
    assert read_table(path) == (["id", "answer", "note"], [{"id": "x1", "answer": "=SUM(A1)", "note": ""},
                                                          {"id": "x2", "answer": "False", "note": "ok"}])


def test_json_lines_end_at_a_line_feed_only(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": "x\u2028y\u0085z\u2029"}\n\n{"a": 2}\n', encoding="utf-8")
    assert list(read_jsonl(path)) == [(1, {"a": "x\u2028y\u0085z\u2029"}), (3, {"a": 2})]


def test_json_and_json_lines_errors_have_one_wording(tmp_path: Path) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{lines}, line 2: invalid JSON: Expecting value (column 7)")):
        list(read_jsonl(lines))
    doc = tmp_path / "a.json"
    doc.write_text('[\n  {"a": 1},\n  {"a": }\n]', encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{doc}, line 3: invalid JSON: Expecting value (column 9)")):
        read_json(doc)
    doc.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(doc) == {"a": 1}


def test_a_cell_over_the_csv_field_limit_names_its_row(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,answer\nx1,True\nx2," + "a" * 140_000 + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{path}, row 3: not a readable CSV/TSV row: field larger")):
        read_table(path)
