"""The study report in Chromium: the grid, the learning curve over three checkpoints, items
across models and the agreement matrix, each with its numbers recomputed here from the run
records; a hostile model name stays text; the Markdown and LaTeX tables are written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import chromium_path, stand_in, study_backend

from lingdiag.models.mock import MockBackend
from lingdiag.rundir import RunStore
from lingdiag.study.execute import run_study
from lingdiag.study.loaded import load
from lingdiag.study.report import sections, write_report
from lingdiag.study.schema import StudyFile
from lingdiag.study.sections.curves import curve_figures

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"
HOSTILE = "<img src=x onerror=alert(1)>|x"
CELL = "pairs, simple/lingdiag"

ROWS = """(title) => {
  const h = [...document.querySelectorAll('h4')].find(x => x.textContent === title);
  if (!h) return null;
  let t = h.nextElementSibling;
  while (t && t.tagName !== 'TABLE') t = t.nextElementSibling;
  return [...t.querySelectorAll('tbody tr')].map(r => [...r.children].map(c => c.textContent));
}"""


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    spec = StudyFile.model_validate({
        "name": "report-test", "base": tmp,
        "models": [{"spec": "a", "family": "F", "size": "135M"}, {"spec": "b", "family": "F", "size": "360M"},
                   {"spec": "c", "name": HOSTILE, "family": "G", "size": "1B"},
                   {"name": "tiny", "family": "T", "checkpoints": [{"spec": f"t{k}", "step": k * 100}
                                                                   for k in (1, 2, 3)]}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(tmp / "cache"))
        run_study(spec, tmp / "out", models=stand_in(study_backend))
    write_report(tmp / "out", tmp / "report.html", tmp / "tables")
    return tmp


def _records(study: Path, key: str) -> dict[str, Any]:
    return {r.item_id: r for r in RunStore(study / "out" / "runs" / key / "pairs").load_records()}


def _kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa from the confusion counts (written apart from the library's)."""
    n = len(a)
    pairs = Counter(zip(a, b, strict=True))
    labels = set(a) | set(b)
    po = sum(pairs[(x, x)] for x in labels) / n
    pe = sum(sum(pairs[(x, y)] for y in labels) * sum(pairs[(y, x)] for y in labels) for x in labels) / n / n
    return (po - pe) / (1 - pe)


KEYS = {"a": "a", "b": "b", HOSTILE: "img_src_x_onerror_alert_1___x", "tiny@step100": "tiny_step100",
        "tiny@step200": "tiny_step200", "tiny@step300": "tiny_step300"}


def test_report_in_chromium(study: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    records = {m: _records(study, k) for m, k in KEYS.items()}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((study / "report.html").as_uri())
        grid = page.eval_on_selector_all("#study-grid tbody tr",
                                         "rs => rs.map(r => [...r.children].map(c => c.textContent))")
        assert [(r[0], r[1], r[2], r[3]) for r in grid] == [(m, "pairs", "done", "16/16") for m in KEYS]
        curve = page.evaluate(ROWS, f"tiny: {CELL}")
        expected = []
        for step in (100, 200, 300):
            rs = records[f"tiny@step{step}"].values()
            expected.append([f"tiny@step{step}", str(step), f"{sum(bool(r.correct) for r in rs) / len(rs):.3f}"])
        assert [[r[0], r[1], r[3]] for r in curve] == expected
        assert page.eval_on_selector("#study-curves img", "i => i.complete && i.naturalWidth") > 0
        items = page.evaluate(ROWS, f"Items across models: {CELL}")
        assert len(items) == 16
        for row in items:
            right = [m for m in KEYS if records[m][row[0]].correct]
            assert row[1:3] == [str(len(right)), str(len(KEYS))] and row[4] == ", ".join(right)
        never = [i for i in records["a"] if not any(records[m][i].correct for m in KEYS)]
        assert f"Items every model fails ({len(never)})" in page.inner_text("#study-items")
        matrix = page.evaluate(ROWS, f"Agreement: {CELL}")
        assert [r[0] for r in matrix] == list(KEYS)
        for row in matrix:
            ids = list(records[row[0]])
            for other, cell in zip(KEYS, row[1:-1], strict=True):
                want = _kappa([records[row[0]][i].label for i in ids], [records[other][i].label for i in ids])
                agree = sum(records[row[0]][i].label == records[other][i].label for i in ids)
                assert cell == f"{want:.2f} ({agree}/{len(ids)})"  # kappa beside the raw agreement
            given = sorted(Counter(records[row[0]][i].label for i in ids).items(), key=lambda x: -x[1])
            shown = [part.rsplit(" ", 2) for part in row[-1].split(", ")]
            assert [(lab, int(n)) for lab, n, _ in shown] == given  # exact counts
            pcts = [int(p.strip("(%)")) for _, _, p in shown]
            assert sum(pcts) == 100
            assert all(abs(p - 100 * n / len(ids)) < 1 for p, (_, n) in zip(pcts, given, strict=True))
        assert page.locator("img[src=x]").count() == 0 and HOSTILE in page.inner_text("#study-grid")
        # The suite's scoring-policy line is a note, with no Markdown quoting leaking into the page.
        assert page.locator("blockquote.note", has_text="scoring policy").count() >= 1
        assert not page.evaluate("[...document.querySelectorAll('p,li,td,blockquote')]"
                                 ".some(e => e.textContent.trim().startsWith('>'))")
        assert page.inner_text("h1") == "lingdiag study: report-test"
        assert not errors
        browser.close()


def test_tables_as_markdown_and_latex(study: Path) -> None:
    md = (study / "tables" / "study.md").read_text()
    assert md.startswith("## Findings") and "## Learning curves" in md and "## Agreement between models" in md
    tex = (study / "tables" / "study.tex").read_text()
    assert "\\begin{tabular}" in tex
    row = next(line for line in tex.splitlines() if "onerror" in line)
    assert row.count(" & ") == 5  # the name's "|" stays inside its cell
    assert json.loads((study / "out" / "study.json").read_text())["name"] == "report-test"


NLI_SAMPLE = EXAMPLES / "imperfective-nli-sample.json"


def _knower(config: Any) -> Any:
    """A stand-in that answers every item of the NLI sample with its gold label (``broken`` specs fail
    to load; ``guess`` ones answer by hash)."""
    if not config.model.startswith("knows"):
        return study_backend(config)
    gold = {item["premise"]: item["label"] for item in json.loads(NLI_SAMPLE.read_text())}

    def answer(r: Any) -> str:
        text = str(r.prompt or r.messages)
        return next(label for premise, label in gold.items() if premise in text)
    return MockBackend(generate_fn=answer, name=config.model)


def _checkpoint_study(tmp_path: Path, specs: dict[int, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    spec = StudyFile.model_validate({
        "name": "gaps", "base": tmp_path, "retries": 0,
        "models": [{"name": "tiny", "checkpoints": [{"spec": s, "step": k} for k, s in specs.items()]}],
        "suites": [{"suite": "imperfective", "dataset": str(NLI_SAMPLE), "axes": {"strategy": "zero-shot"},
                    "name": "nli"}]})
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    run_study(spec, tmp_path / "out", models=stand_in(_knower))
    found, _ = sections(tmp_path / "out")
    return {s.anchor: s.text for s in found}


def test_no_onset_or_stability_is_claimed_over_checkpoints_that_never_ran(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 57: steps 1 and 3 never ran (the study gave up on them), step 2 got every item right."""
    text = _checkpoint_study(tmp_path, {1: "broken-1", 2: "knows-2", 3: "broken-3"}, monkeypatch)
    findings = text["study-findings"]
    assert "first appears at" not in findings and "and is stable" not in findings
    sentence = next(line for line in findings.splitlines() if "Learning curve of tiny" in line)
    assert "is present at tiny@step2, where it may not first appear (tiny@step1 before it not measured)" in sentence
    assert "whether it is stable after it is not known (tiny@step3 not measured)" in sentence
    assert "Planned but not measured, in no number below: tiny@step1 × nli (gave up), tiny@step3 × nli (gave up)" \
        in findings
    rows = [line for line in text["study-curves"].splitlines() if line.startswith("| tiny@step")]
    assert [r.split(" | ")[0] for r in rows] == ["| tiny@step1", "| tiny@step2", "| tiny@step3"]  # training order
    assert "| 1.000 |" in rows[1] and all(rows[k].endswith("| not measured (gave up) |") for k in (0, 2))


def test_a_checkpoint_that_failed_to_load_is_named_on_the_curve_and_in_the_neighbour_test(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 57: the curve and the neighbour test joined step 500 to step 4000 without a mark."""
    text = _checkpoint_study(tmp_path, {500: "guess-500", 1000: "broken-1000", 4000: "knows-4000"}, monkeypatch)
    curve = text["study-curves"]
    assert "| tiny@step1000 | 1000 |  | – | – | 0 | 0.333 | not measured (gave up) |" in curve
    (row,) = [line for line in text["study-adjacent"].splitlines() if line.startswith("| checkpoint")]
    assert row.startswith("| checkpoint (not measured between: tiny@step1000) | nli |")
    assert "| tiny@step4000 | tiny@step500 |" in row  # A the later checkpoint
    between = [line for line in text["study-findings"].splitlines() if "differs from tiny@step500" in line]
    assert all("tiny@step1000 between them not measured" in line for line in between)
    assert "- not tested: nli: tiny@step1000: not measured (gave up)" in text["study-adjacent"]
    grid = next(line for line in text["study-grid"].splitlines() if line.startswith("| tiny@step1000 |"))
    assert "model broken-1000 did not load" in grid  # the reason, once, in the grid of runs


def test_the_curve_figure_breaks_at_a_missing_checkpoint_and_names_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:

    _checkpoint_study(tmp_path, {500: "guess-500", 1000: "broken-1000", 4000: "knows-4000"}, monkeypatch)
    study = load(tmp_path / "out")
    (figure,) = curve_figures(study.curves)
    assert figure.caption.endswith("Not measured (dotted, the line broken there): tiny@step1000 (not measured "
                                   "(gave up)).")


def test_a_sentence_names_ten_runs_and_counts_the_rest() -> None:
    from lingdiag.study.sections import some

    assert some([f"m@step{k}" for k in range(12)]) == ", ".join(f"m@step{k}" for k in range(10)) + " and 2 more"
    assert some(["a", "b"]) == "a, b"
