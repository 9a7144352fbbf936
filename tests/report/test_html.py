"""The HTML report: escaping of untrusted text, contents, and the no-matplotlib fallback."""

import base64
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from lingdiag import figures
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_run, load_runs
from lingdiag.records import GenerationRequest
from lingdiag.report.html import write_html
from lingdiag.report.markup import markdown_to_html
from lingdiag.report.tables import metrics_json, tables
from lingdiag.suites.imperfective import figures as plots

PNG = b"\x89PNG\r\n\x1a\n"
XSS_OUTPUT = "<script>alert(1)</script> I refuse"
XSS_PREMISE = 'The carpenter was building a gazebo <img src=x onerror="alert(2)">.'


def hostile_dataset(path: Path) -> Path:
    """Four ImperfectiveNLI rows whose text carries markup."""
    rows = [
        {"id": "A_1", "group": "A", "verb_class": "Creation", "verb": "build", "premise": XSS_PREMISE + " But it fell.",
         "hypothesis": "The carpenter built a gazebo.", "label": "False"},
        {"id": "B_1", "group": "B", "verb_class": "Activity", "verb": "run",
         "premise": "The athletes were running, but it hailed.", "hypothesis": "The athletes ran.", "label": "True"},
        {"id": "C_1", "group": "C", "verb_class": "Creation", "verb": "build", "premise": XSS_PREMISE,
         "hypothesis": "The carpenter built a gazebo.", "label": "Unknown"},
        {"id": "D_1", "group": "D", "verb_class": "Activity", "verb": "run",
         "premise": "The athletes were running.", "hypothesis": "The athletes ran.", "label": "True"},
    ]
    path.write_text(json.dumps(rows))
    return path


def answer(req: GenerationRequest) -> str:
    """Right on A, wrong on B, markup (unparsed) on C, right on D."""
    text = req.messages[-1].content
    if "fell" in text:
        return "False"
    if "hailed" in text:
        return "Unknown"
    return XSS_OUTPUT if "gazebo" in text else "True"


def combined(run_dirs: list[Path], html: Path) -> tuple[str, dict[str, Any]]:
    """What ``lingdiag report RUN... --html FILE`` does."""
    runs = load_runs(run_dirs)
    text = tables(runs)
    write_html(html, text, runs)
    return text, metrics_json(runs)


def make_run(tmp_path: Path, name: str, model: str, strategies: list[str], dataset: str = "builtin",
             limit: int | None = None) -> Path:
    cfg = RunConfig(suite="imperfective", model=model, dataset=dataset, axes={"strategy": strategies}, limit=limit)
    evaluate(cfg, MockBackend(answer, name=model), tmp_path / name)
    return tmp_path / name


def test_untrusted_text_is_escaped(tmp_path: Path) -> None:
    data = hostile_dataset(tmp_path / "hostile.json")
    run = make_run(tmp_path, "r", "<b>evil-model</b>", ["zero-shot"], dataset=str(data))
    combined([run], tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    # Records reach the page only inside the JSON data block, with <, > and & escaped.
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e I refuse" in page
    assert page.lower().count("<script") == 2  # the data block and the browser's own script
    assert "alert(" not in page.replace("\\u003cscript\\u003ealert(1)", "").replace('onerror=\\"alert(2)', "")
    assert "<img src=x" not in page
    assert "<b>evil-model</b>" not in page and "&lt;b&gt;evil-model&lt;/b&gt;" in page


def test_report_holds_counts_tables_figures_and_records(tmp_path: Path) -> None:
    data = hostile_dataset(tmp_path / "d.json")
    run = make_run(tmp_path, "r", "mock", ["zero-shot", "dap", "cot"], dataset=str(data))
    text, everything = combined([run], tmp_path / "out" / "report.html")
    page = (tmp_path / "out" / "report.html").read_text()
    m = everything[str(run)]["metrics"]["zero-shot"]
    assert (m["n"], m["n_unparsed"], m["n_errors"]) == (4, 1, 0)
    assert ("<td>mock × imperfective</td><td>mock</td><td>zero-shot</td><td>4</td><td>1</td><td>25.0%</td>"
            "<td>0</td>") in page
    assert "<th>Acc A (↑)</th>" in page  # the markdown tables are HTML tables
    assert "<th>Creation</th>" in page
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(PNG) for i in images)
    assert "Prompt trade-off (§5.2, Figure 1)" in page
    # Every interval beside its value and method: Wilson for shares, bootstrap for the Δ_AA gap.
    # 1 of 1 right: Wilson's lower bound is 0.20655, rounded once (it read 0.206 when rounded to 4 places first).
    assert "<td>acc_A</td><td>1.000</td><td>[0.207, 1.000]</td><td>Wilson score</td>" in page
    assert "<td>delta_aa</td>" in page and "percentile bootstrap over items (2000 resamples, seed 0)" in page
    # Every record of every condition is in the item browser's data, with its full prompt.
    found = re.search(r'<script type="application/json" id="records">(.*?)</script>', page)
    assert found is not None
    data = json.loads(found.group(1))
    outcomes = [data["strings"][row[data["columns"].index("outcome")]] for row in data["rows"]]
    assert sorted(outcomes) == sorted(["correct", "correct", "wrong", "unparsed"] * 3)
    assert any(s.startswith("[system]\nSystem Prompt: You are a strict logician") for s in data["strings"])
    # Three strategies of one model are enough for the trade-off analysis.
    assert "Prompt trade-off (§5.2, Figure 1)</h4>" in page and "zero-shot → dap → cot" in page


def test_report_without_matplotlib_still_writes_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = make_run(tmp_path, "r", "mock", ["zero-shot"], limit=8)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were not installed
    assert not figures.available()
    combined([run], tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "figures need matplotlib: pip install &#x27;lingdiag[plots]&#x27;" in page
    assert "data:image/png" not in page and "<th>Acc A (↑)</th>" in page


def test_two_runs_of_one_model_and_strategy_are_two_series(tmp_path: Path) -> None:
    a = make_run(tmp_path, "a", "mock", ["zero-shot"], limit=8)
    b = make_run(tmp_path, "b", "mock", ["zero-shot"], limit=12)
    combined([a, b], tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "has two runs of condition" not in page and "no figures" not in page
    assert "mock · a" in page and "mock · b" in page  # told apart by their run directories
    # Both runs' records are in the item browser, each run by its name (never a path of this machine).
    assert '"mock · a × imperfective"' in page and '"mock · b × imperfective"' in page
    assert str(tmp_path) not in page


def test_plot_functions_return_png_for_several_models(tmp_path: Path) -> None:
    rows = []
    for model in ("m1", "m2"):
        run = make_run(tmp_path, model, model, ["zero-shot", "cot", "counterfactual"], limit=12)
        rows += load_run(run).rows
    colours = figures.ModelColours.of(["m1", "m2"])
    for draw in (plots.group_accuracy_png, plots.verb_class_png):
        assert draw(rows).startswith(PNG)
    assert plots.tradeoff_png(rows, colours).startswith(PNG)
    assert [f.title for f in plots.figures(rows, colours)][1] == "Prompt trade-off (§5.2, Figure 1)"


@pytest.mark.parametrize(("markdown", "html"), [
    ("## Title <x>", "<h3>Title &lt;x&gt;</h3>"),
    ("| a | b |\n|---|---|\n| 1 | <i>2</i> |", "<table><thead><tr><th>a</th><th>b</th></tr></thead>"
                                               "<tbody><tr><td>1</td><td>&lt;i&gt;2&lt;/i&gt;</td></tr></tbody></table>"),
    ("- one\n- two & three", "<ul><li>one</li><li>two &amp; three</li></ul>"),
    ("plain \"text\"", "<p>plain &quot;text&quot;</p>"),
])
def test_markdown_to_html(markdown: str, html: str) -> None:
    assert markdown_to_html(markdown) == html


def test_runs_differing_in_prompt_source_or_dataset_are_told_apart(tmp_path):
    from lingdiag.report.tables import rows_by_suite

    mock = MockBackend(generate_fn=lambda r: "True" if "build" in str(r.messages) else "False")
    axes = {"strategy": ["zero-shot", "dap"]}
    for source in ("authors", "paper"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes=axes, options={"prompt_source": source}),
                 mock, tmp_path / source)
    runs = load_runs([tmp_path / "authors", tmp_path / "paper"])
    names = {r.model for r in rows_by_suite(runs)["imperfective"]}
    assert names == {"mock · authors", "mock · paper"}
    page = tmp_path / "report.html"
    write_html(page, tables(runs), runs)
    html = page.read_text()
    assert "analyses unavailable" not in html and "two runs of condition" not in html
    assert "mock · authors" in html
    # One run alone keeps its plain model name.
    assert {r.model for r in rows_by_suite(load_runs([tmp_path / "authors"]))["imperfective"]} == {"mock"}


def test_tables_dir_holds_markdown_and_escaped_latex(tmp_path: Path) -> None:
    from lingdiag.report.export import markdown_to_latex, write_tables

    run = make_run(tmp_path, "r", "mock_50%", ["zero-shot", "dap"], limit=8)
    runs = load_runs([run])
    written = write_tables(tmp_path / "tables", runs)
    assert sorted(p.name for p in written) == ["imperfective.md", "imperfective.tex"]
    assert (tmp_path / "tables" / "imperfective.md").read_text() == tables(runs)
    tex = (tmp_path / "tables" / "imperfective.tex").read_text()
    n_tables = sum(line.startswith("|---") for line in tables(runs).splitlines())
    assert tex.count(r"\begin{tabular}") == n_tables and r"mock\_50\%" in tex
    assert "mock_50%" not in tex
    assert markdown_to_latex("## A & B\n\n| x_1 | y |\n|---|---|\n| 1 | $2 |") == (
        "\\paragraph{A \\& B}\n\n\\begin{tabular}{ll}\n\\toprule\nx\\_1 & y \\\\\n\\midrule\n1 & \\$2 \\\\\n"
        "\\bottomrule\n\\end{tabular}\n")


def test_intervals_table_lists_nested_intervals_with_their_method() -> None:
    from lingdiag.metrics.core import CI_METHODS
    from lingdiag.reading import LoadedRun
    from lingdiag.records import ResultRow
    from lingdiag.report.sections.details import _intervals
    from lingdiag.rundir import RunMeta
    from lingdiag.suite import SUITES

    metrics = {"accuracy": 0.5, "accuracy_ci95": [0.4, 0.6],
               "spearman": {"all": {"rho": 0.25, "rho_ci95": [0.1, 0.4]}}, CI_METHODS: {"spearman": "bootstrap X"}}
    meta = RunMeta({"suite": "explica", "model": "m", "dataset": "builtin"}, {"model": "m"})
    page = _intervals([LoadedRun(Path("r"), SUITES.get("explica"), "m", meta, [ResultRow("m", "rating", {}, metrics)])])
    assert "<td>accuracy</td><td>0.500</td><td>[0.400, 0.600]</td><td>Wilson score</td>" in page
    assert "<td>spearman/all/rho</td><td>0.250</td><td>[0.100, 0.400]</td><td>bootstrap X</td>" in page
