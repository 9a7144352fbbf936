"""A suite file runs with every engine feature a built-in suite has: axes, resume, a changed file
refused, shards, reports read from the run's own copy, compare's permutation tests, data stats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NoReturn

import pytest
from typer.testing import CliRunner

from lingdiag import RunConfig, evaluate
from lingdiag.analysis.compare import permute_conditions
from lingdiag.cli import app
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.rundir import SUITE_COPY

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"


def unreachable(request: object) -> NoReturn:
    """A model for a run with nothing left to ask: any request fails the run."""
    raise AssertionError(f"asked {request!r} of a run that was resumed whole")


def copy_example(tmp_path: Path) -> Path:
    for name in ("telicity-adverbials.yaml", "telicity-adverbials.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "telicity-adverbials.yaml"


def answer(req: GenerationRequest) -> str:
    """Always "A" (in an hour): right on accomplishments, wrong on activities."""
    return "A) in an hour"


def loglik(req: LoglikelihoodRequest) -> float:
    """Prefers "for" after stems with an odd length (a fixed, checkable pattern)."""
    return -1.0 if (req.continuation == " for an hour.") == (len(req.context) % 2 == 1) else -2.0


def backend() -> MockBackend:
    return MockBackend(answer, loglik)


def test_a_suite_file_runs_resumes_and_reports_from_its_copy(tmp_path: Path) -> None:
    path = copy_example(tmp_path)
    config = RunConfig(suite=str(path), model="mock", axes={"format": ["choice", "loglik", "choice-2shot"]})
    result = evaluate(config, backend(), tmp_path / "run")
    m = result.metrics["choice"]
    assert (m["acc_accomplishment"], m["acc_activity"], m["in_rate_activity"], m["telicity_gap"]) == (1, 0, 1, 1)
    assert m["accuracy_by_aktionsart"] == {"accomplishment": 1.0, "activity": 0.0}
    assert m["acc_activity_ci95"] == [0.0, pytest.approx(0.242494, abs=1e-6)]  # unrounded: shown rounded once
    assert m["ci95_methods"]["telicity_gap_ci95"].startswith("percentile")
    assert "| choice | mock | 0.50 | 1.00 | 0.00 | 1.00 | 1.00 | 0.00 | 24 |" in result.table
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["suite_file"]["path"] == str(path) and len(meta["suite_file"]["sha256"]) == 64
    assert (tmp_path / "run" / SUITE_COPY).read_bytes() == path.read_bytes()
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    shots = [r for r in records if r["condition"] == "choice-2shot"]
    assert [m["role"] for m in shots[0]["prompts"][0]][:4] == ["system", "user", "assistant", "user"]
    lls = [r for r in records if r["condition"] == "loglik"]
    assert lls[0]["prompts"] == [{"context": "The chef baked a loaf of bread", "continuation": " in an hour."},
                                 {"context": "The chef baked a loaf of bread", "continuation": " for an hour."}]

    again = evaluate(config, MockBackend(unreachable, unreachable), tmp_path / "run")  # all resumed
    assert again.metrics == result.metrics

    path.write_text(path.read_text().replace("careful speaker", "careful native speaker"))
    with pytest.raises(RunError, match="was run from another version of suite file .*SHA-256 changed"):
        evaluate(config, backend(), tmp_path / "run")

    path.unlink()  # reports read the run's own copy of the file
    runs = load_runs([tmp_path / "run"])
    assert runs[0].suite.name == "telicity-adverbials"
    assert "| choice | mock | 0.50 | 1.00 | 0.00 | 1.00 | 1.00 | 0.00 | 24 |" in tables(runs)
    page = render_html(tables(runs), runs)
    assert "Telicity adverbials" in page and "The chef baked a loaf of bread" in page

    tests = permute_conditions(tmp_path / "run", "choice", "loglik")
    assert {t.metric for t in tests} == {"acc_accomplishment", "acc_activity", "in_rate_activity", "telicity_gap"}


def test_shards_together_are_the_whole_run(tmp_path: Path) -> None:
    path = copy_example(tmp_path)
    whole = RunConfig(suite=str(path), model="mock", axes={"format": ["choice"]})
    full = evaluate(whole, backend(), tmp_path / "whole")
    ids = set()
    for k in (1, 2):
        shard = RunConfig.model_validate({**whole.model_dump(), "shard": f"{k}/2"})
        part = evaluate(shard, backend(), tmp_path / f"s{k}")
        ids |= {json.loads(x)["item_id"] for x in (tmp_path / f"s{k}" / "items.jsonl").read_text().splitlines()}
        assert part.metrics["choice"]["n"] < 24
    assert len(ids) == full.metrics["choice"]["n"] == 24


def test_untrusted_text_from_a_suite_file_is_escaped_in_the_report(tmp_path: Path) -> None:
    path = copy_example(tmp_path)
    text = path.read_text().replace("caption: Telicity adverbials (in/for an hour)",
                                    "caption: <script>alert(1)</script>")
    path.write_text(text.replace("You are a careful speaker", "<img src=x onerror=alert(2)>"))
    evaluate(RunConfig(suite=str(path), model="mock", axes={"format": ["choice"]}), backend(), tmp_path / "run")
    runs = load_runs([tmp_path / "run"])
    page = render_html(tables(runs), runs)
    assert "<script>alert(1)" not in page and "<img src=x" not in page


def test_data_stats_and_the_cli_run(tmp_path: Path, fake_api) -> None:
    path = copy_example(tmp_path)
    out = CliRunner().invoke(app, ["data", "stats", str(path), "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.output)
    assert stats["n"] == 24 and stats["by"]["aktionsart"]["activity"]["n"] == 12

    fake_api.content = "B"
    out = CliRunner().invoke(app, ["run", str(path), "--model", f"openai:m@{fake_api.url}", "--format", "choice",
                                   "--out", str(tmp_path / "cli"), "--no-cache", "--limit", "4"])
    assert out.exit_code == 0, out.output
    assert "## Telicity adverbials (in/for an hour)" in out.output
    assert "| choice | m | 0.50 | 0.00 | 1.00 | 0.00 | -1.00 | 0.00 | 4 |" in out.output
    out = CliRunner().invoke(app, ["run", str(path), "--model", "mock", "--style", "x", "--out", str(tmp_path / "c")])
    assert "suite 'telicity-adverbials' has no axis 'style'; its axes: format" in str(out.exception)


def test_dataset_path_overrides_the_files_data(tmp_path: Path) -> None:
    path = copy_example(tmp_path)
    rows = (tmp_path / "telicity-adverbials.csv").read_text().splitlines()
    (tmp_path / "few.csv").write_text("\n".join(rows[:3] + rows[13:15]) + "\n")
    result = evaluate(RunConfig(suite=str(path), model="mock", dataset=str(tmp_path / "few.csv"),
                                axes={"format": ["choice"]}), backend(), tmp_path / "run")
    assert result.metrics["choice"]["n"] == 4


def test_suite_score_reads_outside_answers_as_the_conditions_do(tmp_path: Path) -> None:
    path = copy_example(tmp_path)
    rows = (tmp_path / "telicity-adverbials.csv").read_text().splitlines()[1:]
    answers = "id,answer\n" + "".join(f"{r.split(',')[0]},(A) in an hour\n" for r in rows)
    (tmp_path / "answers.csv").write_text(answers)
    out = CliRunner().invoke(app, ["suite", "score", str(path), "--scores", str(tmp_path / "answers.csv"), "--json"])
    assert out.exit_code == 0, out.output
    m = json.loads(out.output)["metrics"]
    assert (m["acc_accomplishment"], m["acc_activity"], m["in_rate_activity"], m["n"]) == (1.0, 0.0, 1.0, 24)
