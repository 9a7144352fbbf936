"""An axis added as a plug-in, in one module (``lingdiag/conditions/temperature.py``): a sampling
temperature sweep shows in ``meta.json``, the records, the tables, the HTML report, the viewer and a
study's report, with no other file of lingdiag knowing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import stand_in

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import ConfigError
from lingdiag.models.base import Capabilities
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, TextOutput
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.rundir import RunStore
from lingdiag.study.execute import run_study
from lingdiag.study.loaded import load
from lingdiag.study.schema import StudyFile
from lingdiag.study.sections import ordered
from lingdiag.view.app import Viewer

SWEEP = {"strategy": ["zero-shot"], "temperature": ["0", "0.7"]}


def _answer(r: GenerationRequest) -> str:
    """Greedy says True; a sample at temperature > 0 says False (what the backend was asked is what shows)."""
    return "True" if r.sampling is None else "False"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "runs" / "sweep"
    evaluate(RunConfig(suite="imperfective", model="mock", axes=SWEEP, limit=4, seed=7), MockBackend(_answer), out)
    return out


def test_the_axis_records_its_part_and_its_conditions(run: Path) -> None:
    meta = json.loads((run / "meta.json").read_text())
    assert meta["temperature"] == {"zero-shot/temperature-0": {"seed": 7, "temperature": 0.0},
                                   "zero-shot/temperature-0.7": {"seed": 7, "temperature": 0.7}}
    before = (run / "meta.json").read_bytes()
    RunStore(run).write_meta(RunStore(run).read_meta())  # the registered part reads and writes back unchanged
    assert (run / "meta.json").read_bytes() == before
    labels = {(r.axes["temperature"], r.label) for r in RunStore(run).load_records()}
    assert labels == {("0", "True"), ("0.7", "False")}


def test_the_tables_the_report_and_the_viewer_show_it(run: Path) -> None:
    table = (run / "table.md").read_text()
    assert "**temperature: 0**" in table and "**temperature: 0.7**" in table
    runs = load_runs([run])
    text = tables(runs)
    assert "**temperature: 0.7**" in text
    assert "temperature: 0.7" in render_html(text, runs)
    page = Viewer([run.parent]).report(Viewer([run.parent]).run("0/sweep"))
    assert "temperature: 0.7" in page and "zero-shot/temperature-0.7" in page


def test_a_study_sweeps_it_and_reports_it(tmp_path: Path) -> None:
    study = StudyFile.model_validate({"models": [{"spec": "a"}], "retries": 0, "base": tmp_path,
                                      "suites": [{"suite": "imperfective", "axes": SWEEP, "limit": 4, "name": "nli"}]})
    run_study(study, tmp_path / "out", models=stand_in(lambda config: MockBackend(_answer, name=config.model)))
    done = load(tmp_path / "out")
    text = next(s for s in ordered() if s.anchor == "study-accuracy").draw(done).text
    assert "| nli | zero-shot/temperature-0 | a |" in text and "| nli | zero-shot/temperature-0.7 | a |" in text


class Greedy(MockBackend):
    """A backend that cannot sample."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(generate=True, loglikelihood=False, sampling=False)


def test_a_backend_that_cannot_sample_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--temperature: backend mock cannot sample"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes=SWEEP, limit=4), Greedy(_answer), tmp_path / "r")
    assert not (tmp_path / "r").exists()
    evaluate(RunConfig(suite="imperfective", model="mock", axes={**SWEEP, "temperature": ["0"]}, limit=4),
             Greedy(_answer), tmp_path / "greedy")  # temperature 0 alone is greedy: served


@pytest.mark.parametrize("value", ["-1", "nan", "9", "hot"])
def test_a_bad_temperature_is_one_line(value: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"--temperature '{value}': expected a number from 0 to 5"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes={"temperature": [value]}, limit=4),
                 MockBackend(_answer), tmp_path / "r")


def test_reading_a_run_with_the_part_imports_only_the_axis_module(run: Path) -> None:
    """The part's own module, not every suite and provider (79 of lingdiag's modules before)."""
    import subprocess
    import sys

    from helpers import SRC

    code = ("import sys, json; from pathlib import Path; from lingdiag.rundir import RunStore; "
            "before = set(sys.modules); meta = RunStore(Path(sys.argv[1])).read_meta(); "
            "print(json.dumps([sorted(set(sys.modules) - before), sorted(meta.parts)]))")
    out = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    imported, parts = json.loads(out.stdout)
    assert parts == ["temperature"]
    # The axis's module and what it imports (the expander protocol, lingdiag.suite): no other axis, no suite,
    # provider or orchestrator (``import lingdiag`` imports none of them either: its names are lazy).
    axes = {"after_thinking", "precision", "scoring_policy", "temperature", "thinking"}
    assert [m for m in imported if m.removeprefix("lingdiag.conditions.") in axes] == \
        ["lingdiag.conditions.temperature"], imported
    assert not [m for m in imported if m.startswith(("lingdiag.suites", "lingdiag.models", "lingdiag.engine"))]


def test_the_help_of_a_run_names_the_axes_of_every_suite(tmp_path: Path) -> None:
    from helpers import lingdiag

    out = lingdiag(tmp_path, "run", "imperfective", "--help", env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "Axes of imperfective" in text and "Axes of every suite" in text
    assert "--temperature T[,T...]" in text and "sampling temperature" in text
    assert "--thinking off,on,budget:N" in text


@pytest.mark.slow
def test_the_embedded_model_samples_and_a_second_run_repeats_it_byte_for_byte(tmp_path: Path) -> None:
    """``lingdiag run imperfective --model smollm2-135m --temperature 0,0.7``: the sampled condition is not
    the greedy one, the sampling is recorded, and a second run (no response cache) writes the same bytes."""
    from helpers import lingdiag

    def run(out: str) -> Path:
        done = lingdiag(tmp_path, "run", "imperfective", "--model", "smollm2-135m", "--strategy", "dap",
                        "--temperature", "0,0.7", "--limit", "3", "--seed", "5", "-o", "max_new_tokens=8", "--no-cache",
                        "--out", out, inherit=True, timeout=1200)
        assert done.returncode == 0, done.stderr
        return tmp_path / out

    first, second = run("a"), run("b")
    assert (first / "items.jsonl").read_bytes() == (second / "items.jsonl").read_bytes()
    meta = json.loads((first / "meta.json").read_text())
    assert meta["model"]["backend"] == "hf" and {v["temperature"] for v in meta["temperature"].values()} == {0, 0.7}
    texts: dict[str, list[str]] = {}
    for r in RunStore(first).load_records():
        texts.setdefault(r.axes["temperature"], []).extend(o.text for o in r.outputs if isinstance(o, TextOutput))
    # A sample, not the greedy answers (measured: greedy False, False, False; sampled False, False., True).
    assert len(texts["0.7"]) == len(texts["0"]) == 3 and texts["0.7"] != texts["0"]
