"""The byte-offset index of items.jsonl: complete lines only, extended on append, rebuilt on rewrite,
records read a page at a time, an oversized line refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import item_record

from lingdiag.view import index
from lingdiag.view.files import Refused


def _write(run: Path, ids: list[str], mode: str = "w") -> None:
    with open(run / "items.jsonl", mode, encoding="utf-8") as f:
        f.write("".join(item_record(i, "True", "True").to_json() + "\n" for i in ids))


def test_offsets_follow_appends_and_rewrites(tmp_path: Path) -> None:
    idx = index.Index()
    assert len(idx.of(tmp_path)) == 0  # no items.jsonl yet: no record
    _write(tmp_path, ["a", "b", "c"])
    first = idx.of(tmp_path)
    assert len(first) == 3
    assert [r.item_id for _, r in index.read(first, 1, 5)] == ["b", "c"]
    with open(tmp_path / "items.jsonl", "a", encoding="utf-8") as f:  # a run appending, its last line torn
        f.write(item_record("d", "True", "True").to_json() + "\n" + '{"condition": "c", "ite')
    grown = idx.of(tmp_path)
    assert len(grown) == 4 and grown.starts[:4].tolist() == first.starts.tolist()
    assert [r.item_id for _, r in index.read(grown, 3, 10)] == ["d"]
    tmp = tmp_path / "new"
    tmp.mkdir()
    _write(tmp, ["z"])
    os.replace(tmp / "items.jsonl", tmp_path / "items.jsonl")  # a finished run rewrites the file atomically
    assert [r.item_id for _, r in index.read(idx.of(tmp_path), 0, 10)] == ["z"]


def test_an_oversized_record_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, ["a"])
    monkeypatch.setenv("LINGDIAG_VIEW_MAX_RECORD_BYTES", "50")
    with pytest.raises(Refused, match=r"items.jsonl, line 1: \d+ bytes; the limit is 50"):
        index.read(index.Index().of(tmp_path), 0, 1)


def test_a_damaged_line_names_the_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path, ["a"])
    with open(tmp_path / "items.jsonl", "a", encoding="utf-8") as f:
        f.write("not json\n")
    with pytest.raises(Exception, match=r"items.jsonl, line 2: not an item record"):
        index.read(index.Index().of(tmp_path), 0, 5)
