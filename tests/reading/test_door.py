"""The one door to read runs for numbers: a run stopped part-way (2 of 6 items), a stale run and a run with
failed items are refused by ``compare``, ``competence``, ``mixed`` and the ImperfectiveNLI analyses in one
line naming the run and its state; with ``--partial`` each is read and marked in what they print."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import fixture_runs, lingdiag
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading.door import FINAL, PARTIAL, accepted

runner = CliRunner()


@pytest.fixture(autouse=True)
def _cli() -> None:
    mount_suites()


def _finished(tmp_path: Path, name: str, answer: str = "True", limit: int = 6) -> Path:
    out = tmp_path / name
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot"]}, limit=limit),
             MockBackend(lambda r: answer), out)
    return out


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    stopped = Path(shutil.copytree(fixture_runs("rundir-6472672") / "stopped", tmp_path / "stopped"))
    finished = _finished(tmp_path, "finished")
    failed = _finished(tmp_path, "failed", "False")
    items = failed / "items.jsonl"
    meta = json.loads((failed / "meta.json").read_text())
    lines = items.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    record["error"] = "timeout"
    lines[0] = json.dumps(record, sort_keys=True) + "\n"
    items.write_text("".join(lines))
    import hashlib
    meta["finished"] |= {"failed": 1, "bytes": items.stat().st_size,
                         "sha256": hashlib.sha256(items.read_bytes()).hexdigest()}
    (failed / "meta.json").write_text(json.dumps(meta))
    return {"stopped": stopped, "finished": finished, "failed": failed}


def test_the_rule_refuses_what_is_not_final_and_partial_marks_it(runs: dict[str, Path]) -> None:
    assert [r.mark for r in accepted([runs["finished"]])] == [None]
    for name, state in (("stopped", "stopped"), ("failed", "failed")):
        with pytest.raises(RunError) as refused:
            accepted([runs["finished"], runs[name]], FINAL)
        line = str(refused.value)
        assert "\n" not in line and str(runs[name]) in line and f": {state}:" in line and "--partial" in line
        marked = accepted([runs["finished"], runs[name]], PARTIAL)
        assert marked[0].mark is None and marked[1].mark
    assert "2 of 6 items" in (accepted([runs["stopped"]], PARTIAL)[0].mark or "")


@pytest.mark.parametrize("command", [["compare"], ["competence"], ["mixed"], ["imperfective", "analyze"]])
def test_every_reader_of_numbers_refuses_a_stopped_run_in_one_line(runs: dict[str, Path], command: list[str]) -> None:
    result = runner.invoke(app, [*command, str(runs["finished"]), str(runs["stopped"])])
    assert isinstance(result.exception, RunError) and result.stdout == ""
    line = str(result.exception)
    assert "\n" not in line and line.startswith(f"{runs['stopped']}: stopped: run not finished (stopped): 2 of 6")


def test_the_command_line_says_it_in_one_line_with_exit_2(runs: dict[str, Path], tmp_path: Path) -> None:
    done = lingdiag(tmp_path, "compare", str(runs["finished"]), str(runs["stopped"]))
    assert done.returncode == 2 and done.stdout == ""
    assert [line for line in done.stderr.splitlines() if line.strip()] == [
        f"error: {runs['stopped']}: stopped: run not finished (stopped): 2 of 6 items; its numbers are not final "
        "(pass --partial to read it, marked in every table)"]


def test_compare_with_partial_marks_the_stopped_run(runs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["compare", str(runs["finished"]), str(runs["stopped"]), "--partial"])
    assert result.exit_code == 0, result.output
    assert "Not final** (B): run not finished (stopped): 2 of 6 items" in result.output
    as_json = runner.invoke(app, ["compare", str(runs["finished"]), str(runs["stopped"]), "--partial", "--json"])
    assert json.loads(as_json.stdout)["not_final"] == {str(runs["stopped"]): "run not finished (stopped): 2 of 6 items"}


def test_imperfective_analyze_with_partial_marks_the_run(runs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["imperfective", "analyze", str(runs["failed"]), "--partial"])
    assert result.exit_code == 0, result.output
    assert f"Not final** ({runs['failed']}): 1 of 6 items failed" in result.output


def test_items_fit_refuses_a_named_stopped_run_and_partial_notes_it(runs: dict[str, Path], tmp_path: Path) -> None:
    from lingdiag.items.matrix import read_matrices

    with pytest.raises(RunError, match=r"stopped: run not finished \(stopped\): 2 of 6 items"):
        read_matrices([runs["finished"], runs["stopped"]])
    read = read_matrices([runs["finished"], runs["stopped"]], PARTIAL)
    assert any("read though not final" in line and str(runs["stopped"]) in line for line in read.left_out)
