"""A run directory's copy of its suite file is checked against ``meta.json`` before a report
reads the records with it (issue 35): an edited copy would change the metrics silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.rundir import SUITE_COPY

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"


def test_an_edited_copy_is_refused_before_use(tmp_path: Path) -> None:
    for name in ("telicity-adverbials.yaml", "telicity-adverbials.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    config = RunConfig(suite=str(tmp_path / "telicity-adverbials.yaml"), model="mock", axes={"format": ["choice"]})
    evaluate(config, MockBackend(lambda r: "A) in an hour"), tmp_path / "run")
    assert load_runs([tmp_path / "run"])[0].suite.name == "telicity-adverbials"
    copy = tmp_path / "run" / SUITE_COPY
    copy.write_text(copy.read_text().replace("careful speaker", "careful native speaker"))
    with pytest.raises(RunError, match=r"suite.yaml: SHA-256 \w+ is not the \w+ meta.json records"):
        load_runs([tmp_path / "run"])


def test_suite_score_out_is_readable_by_report(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lingdiag.cli import app

    for name in ("telicity-adverbials.yaml", "telicity-adverbials.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    rows = (tmp_path / "telicity-adverbials.csv").read_text().splitlines()[1:]
    (tmp_path / "answers.csv").write_text("id,answer\n" + "".join(f"{r.split(',')[0]},(A) in an hour\n" for r in rows))
    out = CliRunner().invoke(app, ["suite", "score", str(tmp_path / "telicity-adverbials.yaml"),
                                   "--scores", str(tmp_path / "answers.csv"), "--out", str(tmp_path / "imported")])
    assert out.exit_code == 0, out.output
    # A fresh process, as a user's: the suite file is not registered there, only the run holds it.
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path("src").resolve()), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "lingdiag", "report", str(tmp_path / "imported")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "answers" in proc.stdout
