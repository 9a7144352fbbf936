"""``lingdiag score imperfective|cxnli``: answers produced elsewhere get exactly a run's metrics."""

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import DatasetError
from lingdiag.io.importing import import_labels
from lingdiag.models.mock import MockBackend
from lingdiag.records import UNPARSED, GenerationRequest, Prediction, as_text
from lingdiag.registry import load_plugins
from lingdiag.rundir import RunStore
from lingdiag.suite import SUITES

runner = CliRunner()

# Deterministic answers of every shape the parsers meet: bare labels, sentences, JSON, nothing.
ANSWERS = ("True", "The answer is False.", '{"label": "Unknown"}', "I cannot tell.", "entailment",
           "Relation: 2", "1", "neutral, or maybe contradiction")


def parser(suite: str) -> Callable[[str], Prediction]:
    """The suite's answer parser (these suites' answers are labels)."""
    parse = SUITES.get(suite).parse_answer
    assert parse is not None
    return parse


def answer_for(request: GenerationRequest) -> str:
    text = json.dumps(request.messages[-1].content if request.messages else request.prompt)
    return ANSWERS[sum(map(ord, text)) % len(ANSWERS)]


@pytest.fixture(autouse=True)
def _cli() -> None:
    load_plugins()
    mount_suites()


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.mark.parametrize(("suite", "axes"), [("imperfective", {"strategy": ["zero-shot"]}),
                                             ("cxnli", {"exp": ["1"], "setting": ["zero"]})])
def test_scored_answers_equal_the_run_that_produced_them(tmp_path, suite, axes):
    mock = MockBackend(generate_fn=answer_for)
    evaluate(RunConfig(suite=suite, model="mock", axes=axes), mock, tmp_path / "run")
    records = RunStore(tmp_path / "run").load_records()
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    (expected,) = metrics.values() if len(metrics) == 1 else [next(iter(metrics.values()))]
    first = records[0].condition
    rows = [{"id": r.item_id, "answer": as_text(r.outputs[0])} for r in records if r.condition == first]
    rows.append({"id": "no-such-item", "answer": "True"})
    rows.append({"id": rows[0]["id"], "answer": "a second answer is ignored"})
    path = write(tmp_path / "answers.csv", rows)
    result = runner.invoke(app, ["score", suite, "--scores", str(path), "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["unmatched"] == [{"id": "no-such-item", "row": len(rows)}] and got["repeated_rows"] == 1
    assert got["matched_items"] == len(rows) - 2
    # Every metric of the suite, except those read from generation details (token counts).
    same = {k: v for k, v in expected.items() if "trunc" not in k and "token" not in k}
    assert {k: got["metrics"].get(k) for k in same} == same
    assert 0 < got["metrics"]["n_unparsed"] < got["metrics"]["n"]  # the mix of answers exercises the parser


def test_score_out_is_a_run_for_report(tmp_path):
    items = SUITES.get("imperfective").load("builtin").items[:12]
    path = write(tmp_path / "answers.csv", [{"id": it.id, "answer": it.gold} for it in items if it.gold is not None])
    result = runner.invoke(app, ["score", "imperfective", "--scores", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    report = runner.invoke(app, ["report", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    assert "answers" in report.stdout and "1.00" in report.stdout
    # Ended as a run ends (lingdiag.engine.finish): its metrics and table beside the records.
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert list(metrics) == ["imported"] and metrics["imported"]["n"] == 12 and metrics["imported"]["acc_A"] == 1
    assert "answers" in (tmp_path / "r" / "table.md").read_text()


def test_jsonl_answers_and_a_missing_column(tmp_path):
    items = SUITES.get("imperfective").load("builtin").items[:3]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"id": it.id, "out": "Unknown"}) + "\n" for it in items))
    parse = parser("imperfective")
    result = import_labels(path, items, score_col="out", parse=parse)
    assert [r.label for r in result.records] == ["Unknown"] * 3 and result.missing == 0
    assert [r.correct for r in result.records] == [it.gold == "Unknown" for it in items]
    with pytest.raises(DatasetError, match="missing column") as e:
        import_labels(path, items, score_col="answer", parse=parse)
    assert e.value.field == "answer" and "a.jsonl" in str(e.value)
    assert parser("cxnli")("Relation: 0") == Prediction("entailment", {"rule": "answer/phrase"})
    assert parser("cxnli")("no idea") == Prediction(UNPARSED, {"rule": "no-label"})
    # An imported answer's record names the rule that read it, or the reason it was refused.
    assert parser("imperfective")("Maybe True") == Prediction(UNPARSED, {"unparsed": "hedged"})
    refused = import_labels(write(path.with_suffix(".csv"), [{"id": items[0].id, "out": "Maybe True"}]), items,
                            score_col="out", parse=parse).records
    assert refused[0].detail == {"answer": "Maybe True", "unparsed": "hedged"}


def test_a_raw_line_separator_inside_an_imported_answer_survives_import(tmp_path):
    """JSON leaves U+2028 unescaped with ensure_ascii=False; it must not cut the record in two."""
    items = SUITES.get("imperfective").load("builtin").items[:2]
    answer = "I think\u2028the answer is\u2029Unknown\x85."
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"id": it.id, "out": answer}, ensure_ascii=False) + "\n" for it in items),
                    encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")
    result = import_labels(path, items, score_col="out", parse=parser("imperfective"))
    assert [r.detail["answer"] for r in result.records] == [answer, answer]
    assert [r.label for r in result.records] == ["Unknown", "Unknown"] and result.missing == 0
