"""Every file lingdiag writes goes through lingdiag.io.atomic: unique temporary files, no symlink
followed, concurrent writers never tear or mix a file, a failed write leaves nothing behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import WriteError
from lingdiag.io.atomic import atomic_text, is_temporary, make_dir, write_atomic
from lingdiag.models.mock import MockBackend

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_symlinks_at_old_fixed_temporary_names_are_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "report.html"
    for name in ("report.html.partial", "report.html.tmp", ".report.html.tmp"):
        (tmp_path / name).symlink_to(victim)
    write_atomic(target, "<p>new</p>")
    assert victim.read_text() == "precious"
    assert target.read_text() == "<p>new</p>" and not target.is_symlink()


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "out.csv").symlink_to(victim)
    with atomic_text(tmp_path / "out.csv", newline="") as f:
        f.write("a,b\r\n")
    assert victim.read_text() == "precious" and not (tmp_path / "out.csv").is_symlink()


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "d" / "table.md"
    target.parent.mkdir()
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_text(target) as f:
        f.write("half")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old" and [p.name for p in target.parent.iterdir()] == ["table.md"]


def test_unwritable_directory_is_a_one_line_write_error(tmp_path: Path, read_only: Any) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    read_only(ro)
    with pytest.raises(WriteError, match=r"^cannot write .*ro/x\.html: (Permission denied|Operation not permitted)$"):
        write_atomic(ro / "x.html", "x")
    with pytest.raises(WriteError, match=r"^cannot write .*ro/sub: "):
        make_dir(ro / "sub")


def test_lone_surrogates_are_written_as_replacement_characters(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a.json", '{"t": "a\ud800b"}')
    with atomic_text(tmp_path / "b.txt") as f:
        f.write("x\udfffy")
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == '{"t": "a\ufffdb"}'
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "x\ufffdy"


def test_files_get_the_usual_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "f", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o644


def test_no_writer_in_the_package_bypasses_the_helper() -> None:
    # Writing modes of open(), Path.write_text/write_bytes and fixed temporary names belong to
    # lingdiag.io.atomic alone (rundir/directory.py's durable append of records is the one exception).
    package = Path(SRC) / "lingdiag"
    offenders = []
    for path in package.rglob("*.py"):
        if path.name == "atomic.py":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in (r"(?<!store)\.write_(text|bytes)\(", r'open\([^)]*"[wx]b?"', r"\.partial", r'"\.tmp"',
                       r"\.savefig\((?!buf)"):
            if re.search(needle, text):
                offenders.append(f"{path.relative_to(package)}: {needle}")
    assert offenders == []


def _mock_run(out: Path, model: str, strategies: list[str]) -> Path:
    cfg = RunConfig(suite="imperfective", model=model, dataset="builtin", axes={"strategy": strategies}, limit=8)
    evaluate(cfg, MockBackend(lambda req: "True", name=model), out)
    return out


def _report(cwd: Path, run: Path, html: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "lingdiag", "report", str(run), "--html", str(html)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})


@pytest.mark.slow
def test_two_concurrent_reports_on_one_file_never_tear_or_mix_it(tmp_path: Path) -> None:
    runs = [_mock_run(tmp_path / "a", "model-a", ["zero-shot"]),
            _mock_run(tmp_path / "b", "model-b", ["zero-shot", "cot"])]
    whole = []
    for run in runs:  # each report alone, as the reference
        proc = _report(tmp_path, run, tmp_path / f"{run.name}.html")
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        whole.append((tmp_path / f"{run.name}.html").read_bytes())
    assert whole[0] != whole[1]
    html = tmp_path / "out.html"
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "out.html.partial").symlink_to(victim)  # the name earlier versions always wrote
    for _ in range(4):
        procs = [_report(tmp_path, run, html) for run in runs]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0 and "Traceback" not in err, err
        assert html.read_bytes() in whole
    assert victim.read_text() == "precious"
    assert not [p.name for p in tmp_path.iterdir() if is_temporary(p.name)]
