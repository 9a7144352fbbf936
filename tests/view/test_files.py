"""The viewer opens only regular files inside their run, within their bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lingdiag.view.files import Refused, inside, read_text


def test_a_file_of_the_run_reads(tmp_path: Path) -> None:
    (tmp_path / "table.md").write_text("| a |\n")
    assert read_text(tmp_path, "table.md") == "| a |\n"


def test_symlinks_and_paths_out_of_the_run_are_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    (run / "table.md").symlink_to(secret)
    with pytest.raises(Refused, match="outside the run directory"):
        read_text(run, "table.md")
    with pytest.raises(Refused, match="outside the run directory"):
        inside(run, "../secret.txt")
    (run / "inner.md").write_text("x")
    (run / "meta.json").symlink_to(run / "inner.md")  # a link inside the run is fine
    assert read_text(run, "meta.json") == "x"


def test_not_regular_or_too_large_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "table.md")
    with pytest.raises(Refused, match="not a regular file"):
        read_text(tmp_path, "table.md")
    (tmp_path / "meta.json").write_text("x" * 100)
    monkeypatch.setenv("LINGDIAG_VIEW_MAX_META_BYTES", "10")
    with pytest.raises(Refused, match="100 bytes; the limit is 10"):
        read_text(tmp_path, "meta.json")
