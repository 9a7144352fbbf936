"""A run directory's copy of its suite file is checked against ``meta.json`` before a report
reads the records with it (issue 35): an edited copy would change the metrics silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.report.tables import load_runs
from lingdiag.run import evaluate
from lingdiag.suite import SUITE_COPY

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"


def test_an_edited_copy_is_refused_before_use(tmp_path: Path) -> None:
    for name in ("telicity-adverbials.yaml", "telicity-adverbials.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    config = RunConfig(suite=str(tmp_path / "telicity-adverbials.yaml"), model="mock", axes={"format": ["choice"]})
    evaluate(config, MockBackend(lambda r: "A) in an hour"), tmp_path / "run")
    assert load_runs([tmp_path / "run"])[0].suite == "telicity-adverbials"
    copy = tmp_path / "run" / SUITE_COPY
    copy.write_text(copy.read_text().replace("careful speaker", "careful native speaker"))
    with pytest.raises(RunError, match=r"suite.yaml: SHA-256 \w+ is not the \w+ meta.json records"):
        load_runs([tmp_path / "run"])
