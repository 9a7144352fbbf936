"""``lingdiag score <suite> --out``: every suite's score command, ExpliCa's own included, ends its run
directory as a run ends (``lingdiag.cli.score.ended`` → ``lingdiag.finish``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import mount_suites
from lingdiag.cli.app import app
from lingdiag.registry import load_plugins
from lingdiag.suites.explica import data

runner = CliRunner()


@pytest.fixture(autouse=True)
def _cli() -> None:
    load_plugins()
    mount_suites()


def human_ratings(path: Path) -> Path:
    """ExpliCa's built-in items rated by their own human ratings (each picks its gold connective)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["Sentence_A", "Sentence_B", "connective", "score"])
        w.writeheader()
        w.writerows({"Sentence_A": it.fields["sentence_a"], "Sentence_B": it.fields["sentence_b"], "connective": c,
                     "score": it.fields["human"][c]} for it in data.builtin_items() for c in data.CONNECTIVES)
    return path


def test_explica_score_out_is_ended_as_a_run_is(tmp_path: Path) -> None:
    scores = human_ratings(tmp_path / "human.csv")
    printed = runner.invoke(app, ["score", "explica", "--scores", str(scores), "--dataset", "builtin", "--json"])
    assert printed.exit_code == 0, printed.output
    result = runner.invoke(app, ["score", "explica", "--scores", str(scores), "--dataset", "builtin",
                                 "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    expected = json.loads(printed.stdout)["metrics"]
    assert list(metrics) == ["rating"] and metrics["rating"]["n"] == 72
    for key in ("accuracy", "by_class", "confusion", "predicted"):
        assert metrics["rating"][key] == expected[key], key
    table = (tmp_path / "r" / "table.md").read_text()
    assert "| rating |" in table and "human" in table
    report = runner.invoke(app, ["report", str(tmp_path / "r")])
    assert report.exit_code == 0 and "1.00" in report.stdout, report.output

