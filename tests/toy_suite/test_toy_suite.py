"""The toy suite as a user would add it: run, report with its figure, its CLI, its options."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag import ConfigError, RunConfig, evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.suite import SUITES

sys.path.insert(0, str(Path(__file__).parent))
import lingdiag_toy  # noqa: E402  (registers the suite, as a user's package would)


def answer(req: GenerationRequest) -> str:
    word = req.messages[-1].content.removeprefix("Word: ")
    return "verb" if word in ("run", "eat") else "noun"  # "sing" answered wrong


def test_toy_suite_runs_reports_and_mounts_its_commands(tmp_path: Path) -> None:
    assert SUITES.get("toy") is lingdiag_toy.SUITE
    config = RunConfig(suite="toy", model="mock", axes={"style": ["plain", "strict"]})
    result = evaluate(config, MockBackend(answer), tmp_path / "run")
    assert result.metrics["plain"]["accuracy"] == pytest.approx(5 / 6)
    assert "| strict | mock | 0.83 |" in result.table
    runs = load_runs([tmp_path / "run"])
    assert [r.axes for r in runs[0].rows] == [{"style": "plain"}, {"style": "strict"}]
    page = render_html(tables(runs), runs)
    assert "Toy accuracy" in page and page.count("data:image/png;base64,") == 1

    from lingdiag.cli import app, mount_suites

    mount_suites()
    out = CliRunner().invoke(app, ["toy", "words"])
    assert out.exit_code == 0 and "dog run table" in out.output


def test_toy_suite_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="suite 'toy': max_tokens: unknown key; valid options: max_new_tokens"):
        SUITES.get("toy").parse_options({"max_tokens": 3})
    with pytest.raises(ConfigError, match="suite 'toy': max_new_tokens: Input should be a valid integer"):
        SUITES.get("toy").parse_options({"max_new_tokens": "abc"})
