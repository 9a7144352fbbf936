"""One rule for "not interpretable", applied by every text output: a run's ``table.md``, the
report's Markdown, ``competence`` and ``mixed`` mark a condition at least half unparsed (or
giving one label to every item), as the HTML report greys it out."""

from __future__ import annotations

from pathlib import Path

from lingdiag.analysis.competence import join, to_markdown
from lingdiag.analysis.mixed import fit
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.metrics.interpretable import degenerate_reason, note, reasons
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.report.tables import tables

LABELS = ("True", "False", "Unknown")


def pick(text: str) -> str:
    return LABELS[sum(map(ord, text)) % 3]


def answer(r: GenerationRequest) -> str:
    # CoT copies its JSON template (unparsed, as SmolLM2 does); zero-shot answers vary by item.
    content = r.messages[-1].content
    return "{...}" if "json" in content.lower() else pick(content)


def loglik(r: LoglikelihoodRequest) -> float:
    # The likeliest label varies by item too.
    return 0.0 if r.continuation.strip() == pick(r.messages[-1].content if r.messages else r.context) else -1.0


def run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    config = RunConfig(suite="imperfective", model="mock", dataset="builtin", limit=12,
                       axes={"strategy": ["zero-shot", "cot"], "scoring": ["generate", "loglik"]})
    evaluate(config, MockBackend(answer, loglik_fn=loglik), out)
    return out


def test_the_rule() -> None:
    from helpers import item_record

    unparsed = [item_record(f"i{k}", "unparsed", "True") for k in range(4)]
    assert degenerate_reason(unparsed) == "100% unparsed or failed"
    assert degenerate_reason([item_record(f"i{k}", "False", "True") for k in range(3)]) == \
        "one label (False) for every item"
    assert degenerate_reason([item_record("a", "True", "True"), item_record("b", "False", "True")]) is None
    assert note({}) == "" and note({"cot": "100% unparsed or failed"}).startswith("**Not interpretable**")


def test_table_md_and_the_reports_markdown_mark_an_unparsed_condition(tmp_path: Path) -> None:
    out = run(tmp_path)
    flags = reasons([r for r in load_runs([out])[0].records])
    assert flags["cot"] == "100% unparsed or failed" and "zero-shot" not in flags
    table = (out / "table.md").read_text()
    assert table.startswith("**Not interpretable**") and "cot: 100% unparsed or failed" in table.split("\n")[0]
    report = tables(load_runs([out]))
    first = next(line for line in report.splitlines() if line.startswith("**Not interpretable**"))
    assert "mock · cot: 100% unparsed or failed" in first and "zero-shot:" not in first


def test_competence_marks_a_join_through_an_unparsed_condition(tmp_path: Path) -> None:
    out = run(tmp_path)
    joined = {j.condition: j for j in join("mock", load_runs([out])[0].records)}
    assert joined["cot"].not_interpretable == "prompted: 100% unparsed or failed"
    assert joined["zero-shot"].not_interpretable == ""
    text = to_markdown(list(joined.values()))
    header = next(line for line in text.splitlines() if line.startswith("| Model"))
    cot = next(line for line in text.splitlines() if line.startswith("| mock | cot"))
    assert header.endswith("| Note |") and cot.endswith("| not interpretable: prompted: 100% unparsed or failed |")
    assert "compares the parser or a constant answer" in text


def test_mixed_marks_effects_against_or_of_an_unparsed_condition(tmp_path: Path) -> None:
    records = [r for r in load_runs([run(tmp_path)])[0].records if r.axes.get("scoring") != "loglik"]
    result = fit({"mock": records}, "cot")
    assert result.not_interpretable == {"cot": "mock 100% unparsed or failed"}
    assert result.note("zero-shot") == "not interpretable: cot: mock 100% unparsed or failed"
