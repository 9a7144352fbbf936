"""A run read back is named by its place and carries its own suite: two runs whose server names the
model alike are told apart by what differs, never by a path of this machine, and no absolute path of
the machine the runs were made on reaches a report."""

from __future__ import annotations

import shutil
from pathlib import Path

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _runs(tmp_path: Path) -> list[Path]:
    home = tmp_path / "home" / "someone" / "private"
    home.mkdir(parents=True)
    shutil.copy(EXAMPLES / "imperfective-nli-sample.json", home / "nli.json")
    out = []
    for name, answer in (("a", "True"), ("b", "False")):
        run = home / "runs" / name

        def say(request: GenerationRequest, answer: str = answer) -> str:
            return answer

        evaluate(RunConfig(suite="imperfective", model="m", dataset=str(home / "nli.json"),
                           axes={"strategy": ["zero-shot", "dap"]}), MockBackend(say, name="m"), run)
        out.append(run)
    return out


def test_two_runs_of_one_model_name_are_told_apart_by_their_place(tmp_path: Path) -> None:
    runs = load_runs(_runs(tmp_path))
    assert [r.model for r in runs] == ["m · a", "m · b"]  # the same data: their directories tell them apart
    assert [r.name for r in runs] == ["m · a × imperfective", "m · b × imperfective"]
    assert {row.model for r in runs for row in r.rows} == {"m · a", "m · b"}
    assert [row.dataset for row in runs[0].rows] == ["nli.json", "nli.json"]  # a file's name, not its path


def test_no_absolute_path_of_the_machine_reaches_the_report(tmp_path: Path) -> None:
    runs = load_runs(_runs(tmp_path))
    text = tables(runs)
    page = render_html(text, runs)
    assert str(tmp_path) not in text and str(tmp_path) not in page
    assert "…/private/nli.json" in page  # provenance keeps the file's last parts


def test_one_directory_given_twice_is_one_run(tmp_path: Path) -> None:
    a, _ = _runs(tmp_path)
    assert [r.model for r in load_runs([a, a.parent / "." / "a"])] == ["m"]
