"""``lingdiag run FILE.yaml --help`` lists the file's axes and values; ``lingdiag.load`` gives the
items' fields and the records' ``detail`` as columns."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from lingdiag import RunConfig, evaluate, load
from lingdiag.cli import main
from lingdiag.models.mock import MockBackend

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"


def test_run_help_lists_the_files_axes_and_values(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(sys, "argv", ["lingdiag", "run", str(EXAMPLES / "monotonicity-nli.yaml"), "--help"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "Axes of monotonicity-nli (values; * runs by default):" in shown
    assert "--format plain*,instructed*,loglik*: how the model answers" in shown


def test_load_has_field_and_detail_columns(tmp_path: Path) -> None:
    for name in ("monotonicity-nli.yaml", "monotonicity-nli.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    config = RunConfig(suite=str(tmp_path / "monotonicity-nli.yaml"), model="mock",
                       axes={"format": ["plain", "loglik"]}, limit=4)
    evaluate(config, MockBackend(lambda r: "Yes.", lambda r: -float(len(r.continuation))), tmp_path / "run")
    df = load(tmp_path / "run")
    assert {"field.premise", "field.hypothesis", "tag.direction", "detail.rule", "detail.score"} <= set(df.columns)
    assert df["field.premise"].iloc[0] == "Some of the students ate pizza."
    plain, loglik = df[df["condition"] == "plain"], df[df["condition"] == "loglik"]
    assert set(plain["detail.rule"]) == {"whole-answer"} and loglik["detail.rule"].isna().all()
    # Nested detail values arrive as JSON text: the log-likelihood of each label.
    assert loglik["detail.loglik"].str.startswith("{").all() and '"yes"' in loglik["detail.loglik"].iloc[0]
