"""Bad input is a one-line error naming the file, row/line and field, never a traceback nor a
silent run (each case a real ``lingdiag`` process; answers from a real server on 127.0.0.1)."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag, serve

SRC = str(Path(__file__).resolve().parents[1] / "src")
ITEM = {"id": "x1", "group": "A", "verb_class": "Creation", "verb": "build", "premise": "He was building a house.",
        "hypothesis": "He built a house.", "label": "False"}



def run_args(url: str, out: str, *extra: str, strategy: str = "zero-shot") -> list[str]:
    return ["run", "imperfective", "--model", f"openai:m@{url}", "--strategy", strategy, "--limit", "2",
            "--out", out, *extra]


def edit_records(run: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``run`` with its first record changed in place."""
    lines = (run / "items.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    change(first)
    (run / "items.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return run


def then(_setup: object, args: list[str]) -> list[str]:
    """The arguments, once the case's setup (evaluated as the first argument) has written its file."""
    return args


# (case, setup(tmp) -> args, words the one-line error must hold)
CASES: list[tuple[str, Callable[[Path, str], list[str]], tuple[str, ...]]] = [
    ("limit -1", lambda t, u: run_args(u, "o", "--limit", "-1"), ("limit",)),
    ("limit 0", lambda t, u: run_args(u, "o", "--limit", "0"), ("limit",)),
    ("out is a file", lambda t, u: then((t / "f.txt").write_text("x"), run_args(u, "f.txt")), ("f.txt", "a file")),
    ("option not a number", lambda t, u: run_args(u, "o", "-o", "max_new_tokens=abc"), ("max_new_tokens", "abc")),
    ("option typo", lambda t, u: run_args(u, "o", "-o", "max_new_token=5"),
     ("max_new_token: unknown key", "valid options")),
    ("negative max_new_tokens", lambda t, u: run_args(u, "o", "-o", "max_new_tokens=-5"), ("max_new_tokens",)),
    ("unknown model option", lambda t, u: run_args(u, "o", "--model-option", "concurency=3"), ("concurency",)),
    ("strategy ,", lambda t, u: run_args(u, "o", strategy=","), ("--strategy", "names no value")),
    ("batch tokens -1", lambda t, u: run_args(u, "o", "--batch-tokens", "-1"), ("batch_tokens",)),
    ("non-UTF-8 dataset", lambda t, u: then((t / "l1.json").write_bytes(
        json.dumps([{**ITEM, "premise": "caf\u00e9"}], ensure_ascii=False).encode("latin-1")),
        run_args(u, "o", "--dataset", "l1.json")),
     ("l1.json", "not UTF-8")),
    ("dataset bad field", lambda t, u: then((t / "d.json").write_text(json.dumps([{**ITEM, "group": "Z"}])),
                                            run_args(u, "o", "--dataset", "d.json")), ("d.json", "row 1", "'group'")),
    ("CSV cell over the csv limit", lambda t, u: then((t / "s.csv").write_text("id,answer\nx1," + "a" * 140_000 + "\n"),
                                                      ["score", "imperfective", "--scores", "s.csv"]),
     ("s.csv", "row 2")),
    ("CSV row longer than its header", lambda t, u: then((t / "s.csv").write_text("id,answer\nx1,True,more\n"),
                                                         ["score", "imperfective", "--scores", "s.csv"]),
     ("s.csv", "row 2", "'more'")),
    ("corrupt meta.json", lambda t, u: then((t / "good" / "meta.json").write_text("{"), ["report", "good"]),
     ("meta.json", "line 1")),
    ("empty meta.json", lambda t, u: then((t / "good" / "meta.json").write_text(""), ["report", "good"]),
     ("meta.json",)),
    ("resume over corrupt meta.json", lambda t, u: then((t / "good" / "meta.json").write_text("[1,"),
                                                        run_args(u, "good")), ("meta.json",)),
    ("record correct 'yes'", lambda t, u: then(edit_records(t / "good", lambda r: r.update(correct="yes")),
                                               ["report", "good"]), ("items.jsonl", "line 1", "'correct'")),
    ("record unknown label", lambda t, u: then(edit_records(t / "good", lambda r: r.update(label="Maybe")),
                                               ["report", "good"]), ("items.jsonl", "line 1", "'label'", "Maybe")),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two finished runs of one configuration (answers from a real server)."""
    with serve(lambda path, request: (200, {"choices": [{"message": {"content": "False"}}]})) as url:
        base = tmp_path_factory.mktemp("runs")
        for name in ("good", "other"):
            assert lingdiag(base, *run_args(url, name)).returncode == 0
        (base / "url").write_text(url)
        yield base


@pytest.mark.slow
@pytest.mark.parametrize(("case", "setup", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_error(runs: Path, tmp_path: Path, case: str, setup: Any, words: tuple[str, ...]) -> None:
    for name in ("good", "other"):
        shutil.copytree(runs / name, tmp_path / name)
    proc = lingdiag(tmp_path, *setup(tmp_path, (runs / "url").read_text()))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert lines and lines[-1].startswith("error: ") and all(w in lines[-1] for w in words), lines[-1:]


@pytest.mark.slow
def test_report_flags_runs_over_different_items(runs: Path, tmp_path: Path) -> None:
    for name in ("good", "other"):
        shutil.copytree(runs / name, tmp_path / name)
    edit_records(tmp_path / "other", lambda r: r.update(item_id="zz"))
    proc = lingdiag(tmp_path, "report", "good", "other")
    assert proc.returncode == 0, proc.stderr
    assert "**Runs over different items**" in proc.stdout
    assert "m · other × imperfective: 2 items, 1 not in every run" in proc.stdout
    same = lingdiag(tmp_path, "report", "good", "good")
    assert "different items" not in same.stdout


@pytest.mark.slow
def test_byte_order_mark_is_accepted(runs: Path, tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_text(json.dumps([ITEM]), encoding="utf-8-sig")
    (tmp_path / "bom.csv").write_text("id,answer\nx1,False\n", encoding="utf-8-sig")
    proc = lingdiag(tmp_path, *run_args((runs / "url").read_text(), "o", "--dataset", "bom.json"))
    assert proc.returncode == 0, proc.stderr
    scored = lingdiag(tmp_path, "score", "imperfective", "--scores", "bom.csv", "--dataset", "bom.json", "--json")
    assert scored.returncode == 0 and json.loads(scored.stdout)["matched_items"] == 1, scored.stderr


@pytest.mark.slow
@pytest.mark.parametrize("where", ["parent", "run directory"])
def test_read_only_out_is_one_line_error(runs: Path, tmp_path: Path, read_only: Any, where: str) -> None:
    shutil.copytree(runs / "good", tmp_path / "ro" / "good")
    read_only(tmp_path / "ro" if where == "parent" else tmp_path / "ro" / "good")
    out = "ro/new" if where == "parent" else "ro/good"
    proc = lingdiag(tmp_path, *run_args((runs / "url").read_text(), out, "--no-cache"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: cannot write ro/")


@pytest.mark.slow
def test_full_disk_under_the_run_directory_is_one_line_error(runs: Path, tmp_path: Path) -> None:
    # A file-size limit would truncate the bytecode a first import writes: no .pyc in this process.
    def small_files() -> None:  # no file may grow past 3 kB: meta.json fits, four records do not
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    proc = subprocess.run([sys.executable, "-m", "lingdiag", *run_args((runs / "url").read_text(), "o", "--no-cache"),
                           "--limit", "4"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          preexec_fn=small_files, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC,
                                                       "PYTHONDONTWRITEBYTECODE": "1",
                                                       "LINGDIAG_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: cannot write o/")
