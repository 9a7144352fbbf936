"""A suite file on a par with a built-in suite: its ``by`` breakdowns as tables with intervals in
Markdown, LaTeX and HTML, its declared figures, the scaling figure over model sizes and families,
competence from its generate/log-likelihood pair, and compare's not-interpretable flags.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag import RunConfig, evaluate
from lingdiag.cli import app
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.export import markdown_to_latex
from lingdiag.report.html import render_html
from lingdiag.report.scaling import parse_families, points
from lingdiag.report.tables import tables

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"
NAME = "monotonicity-nli"


class SizedMock(MockBackend):
    """A mock backend that records a parameter count and a model directory, as the hf backend does."""

    def __init__(self, *args: object, n_params: int, path: Path, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.n_params, self.path = n_params, path

    @property
    def identity(self) -> dict[str, str]:
        return {**super().identity, "n_params": str(self.n_params), "path": str(self.path)}


GOLD = {(r["premise"], r["hypothesis"]): r["gold"]
        for r in csv.DictReader(io.StringIO((EXAMPLES / f"{NAME}.csv").read_text(encoding="utf-8")))}


def _text(req: GenerationRequest | LoglikelihoodRequest) -> str:
    return "\n".join(m.content for m in req.messages)


def _downward(req: GenerationRequest | LoglikelihoodRequest) -> bool:
    return "Premise: None of" in _text(req) or " did not " in _text(req).split("Hypothesis")[0]


def answer(req: GenerationRequest) -> str:
    """Plain: "yes" to every item (one label: not interpretable). Instructed: "no" after a
    downward trigger, "yes" otherwise (a "yes" rate of 0 there).
    """
    return "no" if "Remember" in _text(req) and _downward(req) else "yes"


def knows(req: LoglikelihoodRequest) -> float:
    """The gold answer is likelier: log-likelihood accuracy 1."""
    premise, hypothesis = (line.split(": ", 1)[1] for line in _text(req).splitlines()[1:3])
    return -1.0 if req.continuation == GOLD[premise, hypothesis] else -2.0


def model_dir(root: Path, kind: str) -> Path:
    d = root / kind
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": kind}))
    return d


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("mono")
    for name in (f"{NAME}.yaml", f"{NAME}.csv"):
        shutil.copy(EXAMPLES / name, root / name)
    out = []
    for model, size, kind in (("small", 135_000_000, "llama"), ("big", 270_000_000, "gemma3_text")):
        backend = SizedMock(answer, knows, name=model, n_params=size, path=model_dir(root, kind))
        evaluate(RunConfig(suite=str(root / f"{NAME}.yaml"), model=model), backend, root / model)
        out.append(root / model)
    return out


def test_breakdowns_are_tables_with_intervals_in_markdown_and_latex(runs: list[Path]) -> None:
    text = tables(load_runs(runs))
    # As columns: one column per direction beside each condition and model; the plain prompt says
    # "yes" to all 48, so upward accuracy is 12/24 with Wilson's interval.
    assert "### Accuracy by direction\n" in text and "Each cell: the value and its 95% Wilson interval." in text
    assert "| Format | Model | direction = downward | direction = upward |" in text
    # The plain prompt says "yes" to all: half of each direction right (12/24, Wilson's interval);
    # the log-likelihood choice is always right.
    assert "| plain | small | 0.50 [0.31, 0.69] | 0.50 [0.31, 0.69] |" in text
    assert "| loglik | small | 1.00 [0.86, 1.00] | 1.00 [0.86, 1.00] |" in text
    # As rows: the tag's values are the table's rows, one column per model and condition.
    assert "| Trigger | big · plain | small · plain | big · instructed | small · instructed |" in text
    # "yes" rate: instructed says "no" after both downward triggers (12 items each), "yes" after "some".
    assert "| not | 1.00 [0.76, 1.00] | 1.00 [0.76, 1.00] | 0.00 [0.00, 0.24] | 0.00 [0.00, 0.24] |" in text
    assert "| some | 1.00 [0.86, 1.00] | 1.00 [0.86, 1.00] | 1.00 [0.86, 1.00] | 1.00 [0.86, 1.00] |" in text
    latex = markdown_to_latex(text)
    assert r"\paragraph{Accuracy by direction}" in latex
    assert r"Format & Model & direction = downward & direction = upward \\" in latex
    assert r"not & 1.00 [0.76, 1.00] & 1.00 [0.76, 1.00] & 0.00 [0.00, 0.24]" in latex


def test_html_has_breakdowns_figures_competence_and_scaling(runs: list[Path]) -> None:
    loaded = load_runs(runs)
    page = render_html(tables(loaded), loaded)
    section = page[page.index(f'<section id="suite-{NAME}">'):page.index('<section id="items">')]
    assert "<th>direction = upward</th>" in page and "<td>some</td>" in section
    titles = [t for t in ("Accuracy per condition", "Accuracy by direction", '&quot;yes&quot; rate by trigger',
                          "accuracy by model size") if t in page]
    assert len(titles) == 4, titles
    assert "competence (label log-likelihood) vs performance" in section
    assert section.count("<img ") >= 3  # the first figure sits in the summary
    # The intervals table lists each tag value's interval under the metric's path.
    assert "acc_by_direction/upward" in page
    # The plain prompt's one label is greyed out in the breakdown table too.
    assert 'class="degenerate"' in section


def test_the_headline_metric_is_named_by_its_table_header(runs: list[Path]) -> None:
    # The report's summary names the metric as the file's table does, not by its key.
    suite = load_runs(runs)[0].suite  # a run carries its own suite: never looked up by its name
    assert (suite.headline, suite.headline_label) == ("accuracy", "Acc")


def test_scaling_points_one_line_per_family_from_config_or_option(runs: list[Path]) -> None:
    loaded = load_runs(runs)
    found = points(NAME, loaded, {})
    assert {(p.family, p.n_params) for p in found} == {("Llama", 135e6), ("Gemma 3", 270e6)}
    assert all(p.ci95 is not None and p.ci95[0] <= p.value <= p.ci95[1] for p in found)
    named = points(NAME, loaded, parse_families(["small=SmolLM2", "big=SmolLM2"]))
    assert {p.family for p in named} == {"SmolLM2"}


def test_competence_joins_the_loglik_condition_with_each_prompt(runs: list[Path]) -> None:
    result = CliRunner().invoke(app, ["competence", str(runs[0]), "--json"])
    assert result.exit_code == 0, result.output
    joined = json.loads(result.output)
    assert {(j["condition"], j["competence"]) for j in joined} == {("plain", "loglik"), ("instructed", "loglik")}
    plain = next(j for j in joined if j["condition"] == "plain")
    # loglik answers every item right; plain says "yes" to all: right on the 24 yes items only.
    assert (plain["n"], plain["competence_acc"], plain["prompted_acc"], plain["knows_not_says"]) == (48, 1.0, 0.5, 24)
    assert load_runs(runs[:1])[0].suite.competence is not None


def test_compare_flags_uninterpretable_rows_and_skips_them_on_request(runs: list[Path]) -> None:
    flagged = CliRunner().invoke(app, ["compare", str(runs[0]), str(runs[1])])
    assert flagged.exit_code == 0, flagged.output
    plain_row = next(line for line in flagged.output.splitlines() if line.startswith("| plain "))
    assert "not interpretable: A: one label (yes) for every item; B: one label (yes) for every item" in plain_row
    assert "not interpretable" not in next(line for line in flagged.output.splitlines()
                                           if line.startswith("| instructed "))
    skipped = CliRunner().invoke(app, ["compare", str(runs[0]), str(runs[1]), "--skip-uninterpretable", "--json"])
    data = json.loads(skipped.output)
    assert data["skipped"] == ["plain"] and {r["condition"] for r in data["rows"]} == {"instructed", "loglik"}


def test_compare_between_two_conditions_flags_the_uninterpretable_one(runs: list[Path]) -> None:
    result = CliRunner().invoke(app, ["compare", str(runs[0]), "--between", "plain", "instructed", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["not_interpretable"] == {"plain vs instructed": "plain: one label (yes) for every item"}
    skipped = CliRunner().invoke(app, ["compare", str(runs[0]), "--between", "plain", "instructed",
                                       "--skip-uninterpretable", "--json"])
    assert json.loads(skipped.output)["rows"] == []
