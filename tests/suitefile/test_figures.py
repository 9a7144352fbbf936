"""A suite file's figures: named as its table names their metrics (never a raw metric key where the
table gives a header), and each model in the report's colour."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import result_row

from lingdiag.figures import ModelColours
from lingdiag.suitefile.figures import figures
from lingdiag.suitefile.schema import SuiteFile

EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "monotonicity-nli.yaml"


def test_a_figure_without_a_title_takes_its_metrics_table_header() -> None:
    pytest.importorskip("matplotlib")
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["metrics"]["no_rate"] = {"rate": {"label": "no"}}
    data["figures"] = ["yes_rate_downward", {"metric": "acc_by_trigger"}, "no_rate",
                       {"metric": "accuracy", "title": "Mine"}]
    spec = SuiteFile.model_validate(data)
    rows = [result_row(m, "plain", {"yes_rate_downward": 0.5, "no_rate": 0.25, "accuracy": 0.5,
                                    "acc_by_trigger": {"every": 0.5, "not": 1.0}}) for m in ("a", "b")]
    drawn = figures(spec, rows, ModelColours.of(["a", "b", "c"]))
    assert [f.title for f in drawn] == ['monotonicity-nli: "yes" rate, downward per condition',
                                        "monotonicity-nli: Accuracy by trigger",
                                        "monotonicity-nli: no_rate per condition",  # no header anywhere: the key
                                        "monotonicity-nli: Mine per condition"]
    assert all(f.legend == (("a", "#1f77b4"), ("b", "#ff7f0e")) for f in drawn)
