"""Piped output (a batch log) gets one progress line per chunk with done/total, rate and ETA."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers import lingdiag


def test_one_line_per_chunk_when_stderr_is_not_a_terminal(fake_api: Any, tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(f"suite: imperfective\nmodel: openai:m@{fake_api.url}\nchunk_items: 2\n")
    proc = lingdiag(tmp_path, "run", "imperfective", "--config", str(tmp_path / "run.yaml"), "--strategy", "zero-shot",
                    "--limit", "6", "--out", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("zero-shot: ")]
    assert [re.match(r"zero-shot: (\d+)/6 items", ln).group(1) for ln in lines] == ["2", "4", "6"]  # type: ignore[union-attr]
    assert all(re.search(r", [\d.]+ items/s, ETA \d+:\d\d:\d\d$", ln) for ln in lines), lines
    assert "━" not in proc.stderr  # no bar drawn into a log
