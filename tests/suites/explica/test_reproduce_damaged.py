"""``lingdiag reproduce explica --from DIR`` with one damaged published file: a one-line error
naming the file (and row or field), never a traceback, a silent skip or a score with exit 0."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lingdiag.io.fetch import fetch
from lingdiag.registry import load_plugins

SRC = str(Path(__file__).resolve().parents[3] / "src")
PERPLEXITY = "perplexity/Qwen2.5-0.5B-Instruct.csv"
CLOZE = "cloze/zeroshot/cloze_res_outlines_gemma-2-9b-it_cleaned.tsv"


def _cut_half(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _drop_column(p: Path, column: str) -> None:
    lines = p.read_text(encoding="utf-8").split("\n")
    k = lines[0].split("\t").index(column)
    p.write_text("\n".join("\t".join(c for j, c in enumerate(line.split("\t")) if j != k) for line in lines))


def _drop_answer_columns(p: Path) -> None:
    for column in ("answer_greedy_cleaned", "generated_answer_outlines"):
        _drop_column(p, column)


# (file, damage done to it (its return value unused), the one-line error)
DAMAGE: dict[str, tuple[str, Callable[[Path], object], str]] = {
    "latin-1": (PERPLEXITY, lambda p: p.write_bytes(p.read_bytes().replace(b"The man", b"The m\xe9n", 1)),
                r"Qwen2\.5-0\.5B-Instruct\.csv: not UTF-8 text"),
    "torn": (PERPLEXITY, _cut_half, r"Qwen2\.5-0\.5B-Instruct\.csv, row \d+: "),
    "emptied": (CLOZE, lambda p: p.write_bytes(b""), r"cloze_res_outlines_gemma-2-9b-it_cleaned\.tsv: empty file"),
    "no answer column": (CLOZE, _drop_answer_columns, r"gemma-2-9b-it_cleaned\.tsv, row 1: no answer column"),
    "cloze cut short": (CLOZE, _cut_half, r"gemma-2-9b-it_cleaned\.tsv, (row \d+|field '\w+')"),
}


@pytest.fixture()
def published(shared_datasets: Path, tmp_path: Path) -> Path:
    load_plugins()
    fetch("explica", str(shared_datasets))
    root = tmp_path / "results"
    for rel in (PERPLEXITY, CLOZE):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_datasets / "explica_results" / rel, root / rel)
    return root


def _reproduce(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lingdiag", "reproduce", "explica", "--from", str(root)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})


def test_undamaged_files_reproduce(published: Path) -> None:
    proc = _reproduce(published)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_file_is_a_one_line_error(published: Path, case: str) -> None:
    rel, damage, message = DAMAGE[case]
    damage(published / rel)
    proc = _reproduce(published)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert re.search(message, lines[0]), lines[0]
