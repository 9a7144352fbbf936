"""merge checks what it merges: hand-edited records and outputs it must not touch are refused
with their file and line, and an unwritable destination is a one-line error."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lingdiag.cluster import merge
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.scoring import policy

SRC = str(Path(__file__).resolve().parents[2] / "src")
CONFIG = {"suite": "imperfective", "model": "mock", "axes": {"strategy": ["zero-shot"]}, "limit": 12}


def run_shards(root: Path, n: int = 2) -> list[Path]:
    dirs = []
    for k in range(1, n + 1):
        evaluate(RunConfig.model_validate({**CONFIG, "shard": f"{k}/{n}"}), MockBackend(lambda r: "True"),
                 root / f"{k}-of-{n}")
        dirs.append(root / f"{k}-of-{n}")
    return dirs


def edit_line(path: Path, line: int, change: Callable[[dict[str, Any]], None]) -> None:
    lines = path.read_text().splitlines()
    record = json.loads(lines[line - 1])
    change(record)
    lines[line - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def flip(r: dict[str, Any]) -> None:
    r["correct"] = not r["correct"]


def other_gold(r: dict[str, Any]) -> None:
    r["gold"] = "Unknown" if r["gold"] != "Unknown" else "True"
    r["correct"] = r["label"] == r["gold"]  # consistent with itself, not with the dataset


@pytest.mark.parametrize(("change", "field"), [(flip, "correct"), (other_gold, "gold")])
def test_an_edited_record_is_refused_with_file_line_and_field(tmp_path: Path, change: Any, field: str) -> None:
    dirs = run_shards(tmp_path)
    edit_line(dirs[1] / "items.jsonl", 2, change)
    with pytest.raises(RunError, match=rf"2-of-2/items\.jsonl, line 2, field '{field}': "):
        merge(dirs, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_merge_never_replaces_files_of_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    dirs = run_shards(tmp_path)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "items.jsonl").write_text("my own file\n")
    (other / "notes.txt").write_text("kept")
    with pytest.raises(RunError, match=r"holds items\.jsonl but is not a run directory"):
        merge(dirs, other)
    assert (other / "items.jsonl").read_text() == "my own file\n"
    (other / "items.jsonl").unlink()
    merge(dirs, other)  # other files stay beside the merged run (lingdiag submit keeps shards/ and jobs/ there)
    assert (other / "notes.txt").read_text() == "kept"
    merge(dirs, other)  # and a previous merge is replaced


def test_unwritable_merge_destination_is_one_line(tmp_path: Path, read_only: Any) -> None:
    dirs = run_shards(tmp_path)
    (tmp_path / "ro").mkdir()
    read_only(tmp_path / "ro")
    proc = subprocess.run([sys.executable, "-m", "lingdiag", "merge", *map(str, dirs), "--out", "ro/m"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC, "LINGDIAG_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("error: cannot write ro/m: ")


@pytest.mark.parametrize(("part", "change"), [
    ("thinking", lambda m: m["thinking"]["zero-shot/thinking-on"].update(budget=64)),
    ("precision", lambda m: m.update(precision={"dtype": "bfloat16", "per_token_noise": 0.02,
                                                "rescore_fragile": None})),
    ("scoring_policies",
     lambda m: m.update(scoring_policies={"zero-shot/thinking-on": [policy("lm-eval").recorded()]})),
])
def test_shards_whose_own_meta_parts_differ_are_refused_naming_the_part_and_shard(
        tmp_path: Path, part: str, change: Callable[[dict[str, Any]], None]) -> None:
    dirs = []
    for k in (1, 2):
        dirs.append(tmp_path / f"{k}-of-2")
        config = {**CONFIG, "axes": {"strategy": ["zero-shot"], "thinking": ["off", "on"]}, "shard": f"{k}/2"}
        evaluate(RunConfig.model_validate(config), MockBackend(lambda r: "<think>\nhm\n</think>\nTrue"), dirs[-1])
    meta = json.loads((dirs[1] / "meta.json").read_text())
    change(meta)
    (dirs[1] / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(RunError, match=rf"1-of-2 and .*2-of-2 are not shards of one run: their meta.json parts "
                                       rf"'{part}' differ"):
        merge(dirs, tmp_path / "m")
    assert not (tmp_path / "m").exists()
