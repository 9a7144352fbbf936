"""The cross-lingual ImperfectiveNLI example on the multilingual gemma3-270m, one command per run:
every language runs with its own prompt, and the report shows the per-language table and the
paired comparison over aligned items. ``LINGDIAG_XL_LIMIT`` sets the items per language (default 6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.records import ItemRecord

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "imperfective-crosslingual.yaml"
LIMIT = os.environ.get("LINGDIAG_XL_LIMIT", "6")


def test_example_runs_on_gemma3_and_reports_languages(tmp_path: Path) -> None:
    out = tmp_path / "xl"
    result = CliRunner().invoke(app, ["run", str(EXAMPLE), "--model", "gemma3-270m", "--limit", LIMIT,
                                      "--out", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    records = [ItemRecord.from_json(x) for x in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    by_condition = {c: [r for r in records if r.condition == c] for c in ("en", "zh", "de")}
    assert all(len(rs) == int(LIMIT) and {r.tags["language"] for r in rs} == {c} for c, rs in by_condition.items())
    assert {r.tags["align"] for r in by_condition["zh"]} == {r.tags["align"] for r in by_condition["en"]}
    assert all(r.detail["language"] == "zh" for r in by_condition["zh"])
    report = CliRunner().invoke(app, ["report", str(out), "--html", str(tmp_path / "report.html")])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Across languages: accuracy per language" in page and "paired over aligned items" in page
    assert "en (en) vs zh (zh)" in page and "安娜" in page
    print(report.output)
