"""Round-3 probes on the command line: unwritable report and score outputs, commands that match
nothing, options that do not apply, hostile names in tables and paths in one-line errors, and a
CxNLI cell over the csv module's default field limit."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag as run_lingdiag

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend


def lingdiag(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_lingdiag(cwd, *args, inherit=True)


def one_line_error(proc: subprocess.CompletedProcess[str], start: str) -> None:
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), proc.stderr


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    cfg = RunConfig(suite="imperfective", model="a|b\nc", dataset="builtin", axes={"strategy": ["zero-shot"]},
                    limit=8)
    evaluate(cfg, MockBackend(lambda r: "True", name="a|b\nc"), tmp_path / "run")
    return tmp_path / "run"


@pytest.mark.parametrize("option", ["--html", "--tables"])
def test_unwritable_report_outputs_are_one_line(run: Path, tmp_path: Path, read_only: Any, option: str) -> None:
    (tmp_path / "ro").mkdir()
    read_only(tmp_path / "ro")
    target = "ro/report.html" if option == "--html" else "ro/tables"
    one_line_error(lingdiag(tmp_path, "report", "run", option, target), f"error: cannot write {target}")


def test_a_pipe_or_newline_in_a_model_name_keeps_the_table_columns(run: Path, tmp_path: Path) -> None:
    proc = lingdiag(tmp_path, "report", "run", "--tables", "t")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| zero-shot")]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| Prompt"))
    assert rows and rows[0].count(" | ") == header.count(" | "), proc.stdout
    assert "a\\|b c" in rows[0]
    tex = (tmp_path / "t" / "imperfective.tex").read_text()
    assert "a|b c" in tex and tex.count(r"\\") > 3  # the LaTeX cell holds the name whole


def test_newline_in_a_path_stays_on_one_line(tmp_path: Path) -> None:
    odd = tmp_path / "two\nlines"
    odd.mkdir()
    proc = lingdiag(tmp_path, "report", str(odd))
    one_line_error(proc, "error: ")
    assert "two\\nlines" in proc.stderr


def test_score_with_no_matching_row_exits_non_zero(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("id,answer\nnot-an-item,True\n", encoding="utf-8")
    one_line_error(lingdiag(tmp_path, "score", "imperfective", "--scores", "a.csv"), "error: a.csv: no row matched")


def test_unwritable_score_out_is_one_line(tmp_path: Path, read_only: Any) -> None:
    (tmp_path / "a.csv").write_text("id,answer\nA_001,True\n", encoding="utf-8")
    (tmp_path / "ro").mkdir()
    read_only(tmp_path / "ro")
    one_line_error(lingdiag(tmp_path, "score", "imperfective", "--scores", "a.csv", "--dataset", "builtin",
                            "--out", "ro/run"), "error: cannot write ro/run")


@pytest.mark.parametrize(("task", "option"), [("rating", "--lower-is-better"), ("rating", "--higher-is-better"),
                                              ("cloze", "--ties=gold-order"), ("mc", "--connective-col=c"),
                                              ("perplexity", "--missing-ratings=drop"), ("rating", "--choices-col=x")])
def test_score_explica_refuses_options_its_task_does_not_read(tmp_path: Path, task: str, option: str) -> None:
    (tmp_path / "a.csv").write_text("Sentence_A,Sentence_B,score,connective\n", encoding="utf-8")
    proc = lingdiag(tmp_path, "score", "explica", "--scores", "a.csv", "--task", task, option)
    one_line_error(proc, "error: --")
    assert option.split("=")[0] in proc.stderr and f"does not apply to --task {task}" in proc.stderr


def test_score_explica_refuses_non_finite_perplexities(tmp_path: Path, shared_datasets: Path) -> None:
    from lingdiag.io.fetch import fetch
    from lingdiag.registry import load_plugins

    load_plugins()
    fetch("explica", str(shared_datasets))
    source = shared_datasets / "explica_results" / "perplexity" / "Qwen2.5-0.5B-Instruct.csv"
    lines = source.read_text(encoding="utf-8").split("\n")
    column = lines[0].split("\t").index("perplexity")
    cells = lines[1].split("\t")
    cells[column] = "inf"
    (tmp_path / "p.csv").write_text("\n".join([lines[0], "\t".join(cells), *lines[2:]]), encoding="utf-8")
    proc = lingdiag(tmp_path, "score", "explica", "--dataset", "official", "--scores", "p.csv", "--task",
                    "perplexity", "--score-col", "perplexity", "--connective-col", "conn_in_list")
    one_line_error(proc, "error: p.csv, row 2, field 'perplexity': expected a finite number, found 'inf'")


def test_cxnli_cell_over_the_csv_field_limit_is_one_line(tmp_path: Path) -> None:
    rows = ["CxN Type\tNumber\tP/H/R\tAnnotation Targets - Gold Standard Relation",
            "None\t1\tpremise\t" + "A woman rides. " * 10_000, "\t1\thypothesis\tShe rides.", "\t1\trelation\t0"]
    (tmp_path / "big.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = lingdiag(tmp_path, "data", "stats", "cxnli", "--dataset", "big.tsv")
    one_line_error(proc, "error: big.tsv, row 2: not a readable CSV/TSV row")


@pytest.mark.parametrize("command", [["score", "imperfective", "--scores", "s.csv"],
                                     ["score", "cxnli", "--scores", "s.csv"]])
def test_a_csv_row_longer_than_its_header_is_one_line(tmp_path: Path, command: list[str]) -> None:
    """Issue 35: the CSV-injection fix made any row with more cells than its header a TypeError."""
    (tmp_path / "s.csv").write_text("id,answer\nx1,True,extra cell\n", encoding="utf-8")
    proc = lingdiag(tmp_path, *command)
    one_line_error(proc, "error: s.csv, row 2: 3 cells but the header has 2 (extra: 'extra cell')")
