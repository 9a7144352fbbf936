"""``--reader judge:SPEC``: a second model, behind a real OpenAI-compatible server on 127.0.0.1,
reads the answers the rules leave unparsed (or all of them); its labels are marked judged in the
records, the table, the report and the viewer, and its agreement with the rules is reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.metrics.reading import agreement
from lingdiag.models.mock import MockBackend
from lingdiag.prompts.chat import ChatPrompt
from lingdiag.reading import load_runs
from lingdiag.records import JUDGE, JUDGED, UNPARSED, GenerationRequest, Item
from lingdiag.report.browser import label_text, records_data
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.rundir import RunStore
from lingdiag.suite import Condition, Dataset, Suite, register_suite
from lingdiag.view.pages import record_html

LABELS = ("True", "False", "Unknown")
ANSWERS = {  # the model's answer per item, the gold, and what the scripted judge replies
    "i0": ("True", "True", "True"),
    "i1": ("Maybe False.", "False", "False"),  # hedged: the rules refuse it, the judge reads False
    "i2": ("It is hard to tell; I lean towards True.", "True", "NONE"),  # neither reads it
    "i3": ("False", "True", "**True**"),  # the judge disagrees with the rules (and wraps its reply)
}

register_suite(Suite(
    name="toy-judged", description="test suite: a chat prompt over four scripted answers", axes=(),
    load=lambda spec: Dataset(spec, [Item(k, {"q": k}, gold, {}) for k, (_, gold, _) in ANSWERS.items()]),
    conditions=lambda ds, axes, opts, seed: [Condition("c", {}, ChatPrompt("Answer.", "{q}", LABELS), ds.items)],
    metrics=lambda rs: {"acc": sum(bool(r.correct) for r in rs) / len(rs)},
    table=lambda rows: "\n".join(f"{r.model} {r.condition} {r.metrics['acc']}" for r in rows),
    labels=LABELS,
))


def model(req: GenerationRequest) -> str:
    return ANSWERS[req.messages[-1].content][0]


def judge(body: Any) -> str:
    """The judge server: finds the answer between the dashes of its question, replies as scripted."""
    user = body["messages"][-1]["content"]
    answer = re.search(r"-{10}\n(.*)\n-{10}", user, re.S)
    assert answer is not None and "Reply with exactly one of: True, False, Unknown" in user
    return next(reply for text, _, reply in ANSWERS.values() if text == answer.group(1))


def agreeing(body: Any) -> str | None:
    """A judge that reads the answers the rules read as they did (its gate passes), else as scripted."""
    reply = judge(body)
    return "False" if reply == "**True**" else reply


def spec(url: str) -> str:
    return f"openai:judge-model@{url}"


def records(out: Path) -> dict[str, Any]:
    return {r.item_id: r for r in RunStore(out).load_records()}


def test_judge_reads_what_the_rules_left_unparsed(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = agreeing
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge:{spec(fake_api.url)}")
    result = evaluate(config, MockBackend(model), tmp_path / "r")
    # The two answers the rules read (its gate: it agrees on both), then the two they refused.
    assert len(fake_api.paths) == 4
    got = records(tmp_path / "r")
    assert got["i1"].label == "False" and got["i1"].correct is True and got["i1"].detail[JUDGED] is True
    assert got["i1"].detail["unparsed"] == "hedged"  # the rules' reason stays beside the judge's label
    assert got["i1"].detail[JUDGE] == {"label": "False", "model": spec(fake_api.url), "reply": "False"}
    assert got["i2"].label == UNPARSED and got["i2"].detail[JUDGE]["label"] == UNPARSED
    assert JUDGED not in got["i2"].detail and JUDGE not in got["i0"].detail and got["i0"].label == "True"
    assert result.metrics["c"]["n_unparsed"] == 1 and result.metrics["c"]["acc"] == 0.5
    assert "**Read by a judge model**" in result.table and "2 labels judged" not in result.table
    assert f"c: {spec(fake_api.url)} read 2, 1 labels judged" in result.table
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["config"]["reader"] == f"judge:{spec(fake_api.url)}"
    assert meta["judge_gate"] == {"sample": 2, "agreeing": 2, "agreement": 1.0, "threshold": 0.9, "used": True}
    assert label_text(got["i1"]) == f"False (judged by {spec(fake_api.url)})"
    assert label_text(got["i2"]) == "unparsed: doubted"
    # The viewer's item page and the report's item browser show the mark.
    assert f"predicted <b>False (judged by {spec(fake_api.url)})</b>" in record_html(got["i1"])
    data = records_data(load_runs([tmp_path / "r"]))
    shown = {data["strings"][row[4]]: data["strings"][row[8]] for row in data["rows"]}
    assert shown == {"i0": "True", "i1": f"False (judged by {spec(fake_api.url)})", "i2": "unparsed: doubted",
                     "i3": "False"}
    # The reader is part of what a resumed run must match.
    with pytest.raises(RunError, match="differs in: reader"):
        evaluate(RunConfig(suite="toy-judged", model="mock"), MockBackend(model), tmp_path / "r")


def test_judge_all_measures_agreement_and_keeps_the_rules_labels(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = judge
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge-all:{spec(fake_api.url)}")
    result = evaluate(config, MockBackend(model), tmp_path / "r")
    assert len(fake_api.paths) == 4
    got = records(tmp_path / "r")
    assert got["i3"].label == "False" and got["i3"].detail[JUDGE]["label"] == "True"  # the rules' label stays
    a = agreement(list(got.values()))
    assert a is not None and (a.read, a.judged, a.both, a.agree, a.rules_only, a.judge_only) == (4, 1, 2, 1, 0, 1)
    assert "agreeing with the rules on 1 of 2 (50%)" in result.table
    runs = load_runs([tmp_path / "r"])
    page = render_html(tables(runs), runs)
    section = page[page.index('id="reading"'):]
    assert "How the answers were read" in page and "Read by a judge model" in section
    assert "<td>50.0%</td>" in section and "<td>doubted</td>" in section


def test_a_failed_judge_request_fails_the_item_for_a_resume(fake_api: Any, tmp_path: Path) -> None:
    # The server reads the answers the rules read (its gate passes), and answers the others with no text.
    fake_api.content = lambda body: agreeing(body) if judge(body) in ("True", "**True**") else None
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge:{spec(fake_api.url)}",
                       model_options={})
    out = tmp_path / "r"
    result = evaluate(config, MockBackend(model), out)
    failed = {k: r.error for k, r in records(out).items() if r.error}
    assert set(failed) == {"i1", "i2"} and all(e.startswith(f"judge {spec(fake_api.url)}: ") for e in failed.values())
    assert result.metrics["c"]["n_errors"] == 2
    fake_api.content = agreeing
    result = evaluate(config, MockBackend(model), out)  # resumed: the two items read again
    assert result.metrics["c"]["n_errors"] == 0 and records(out)["i1"].label == "False"


def test_a_judged_run_is_deterministic_and_the_cli_takes_the_reader(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = agreeing
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge:{spec(fake_api.url)}")
    evaluate(config, MockBackend(model), tmp_path / "a")
    evaluate(config, MockBackend(model), tmp_path / "b")
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (tmp_path / "b" / "items.jsonl").read_bytes()
    from lingdiag.cli.run import build_config

    built = build_config({"suite": "toy-judged", "model": "mock", "reader": "judge-all:smollm2-135m"}, [])
    assert built.reader == "judge-all:smollm2-135m"


def test_no_credential_of_the_judges_url_is_kept(fake_api: Any, tmp_path: Path) -> None:
    fake_api.content = judge
    secret = f"judge:openai:judge-model@{fake_api.url}?api_key=s3cret"
    evaluate(RunConfig(suite="toy-judged", model="mock", reader=secret), MockBackend(model), tmp_path / "r")
    assert not [p for p in (tmp_path / "r").iterdir() if b"s3cret" in p.read_bytes()]


def test_reader_is_validated_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="judge:SPEC"):
        RunConfig(suite="toy-judged", model="mock", reader="judge")
    with pytest.raises(ValueError, match="judge:SPEC"):
        RunConfig(suite="toy-judged", model="mock", reader="oracle:gpt")
    assert RunConfig(suite="toy-judged", model="mock", reader="rules").recorded()["reader"] == "rules"
    assert "reader" not in RunConfig(suite="toy-judged", model="mock").recorded()  # old configs keep their bytes


@pytest.mark.slow
def test_a_real_model_judges(tmp_path: Path) -> None:
    """The embedded SmolLM2 as the judge of every answer: whatever it replies, a reading is one of the
    choices or unparsed, its reply is kept, and the rules' labels stay.
    """
    config = RunConfig(suite="toy-judged", model="mock", reader="judge-all:smollm2-135m")
    result = evaluate(config, MockBackend(model), tmp_path / "r")
    got = records(tmp_path / "r")
    assert result.metrics["c"]["n_errors"] == 0
    assert all(r.detail[JUDGE]["label"] in (*LABELS, UNPARSED) and isinstance(r.detail[JUDGE]["reply"], str)
               for r in got.values())
    assert (got["i0"].label, got["i3"].label) == ("True", "False")  # the rules' labels, whatever the judge read
    assert agreement(list(got.values())) is not None and "**Read by a judge model**" in result.table


def test_a_judge_that_disagrees_with_the_rules_is_refused_and_the_run_goes_on(
        fake_api: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_api.content = judge  # reads i3's False as True: 1 of the 2 answers the rules read
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge:{spec(fake_api.url)}")
    result = evaluate(config, MockBackend(model), tmp_path / "r")
    assert len(fake_api.paths) == 2  # the gate's sample only: none of its labels is asked for
    got = records(tmp_path / "r")
    assert got["i1"].label == UNPARSED and JUDGED not in got["i1"].detail and JUDGE not in got["i1"].detail
    assert result.metrics["c"]["n_unparsed"] == 2
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["judge_gate"] == {"sample": 2, "agreeing": 1, "agreement": 0.5, "threshold": 0.9, "used": False}
    line = [x for x in capsys.readouterr().err.splitlines() if "refused" in x]
    assert line == [f"warning: judge {spec(fake_api.url)} refused: it read 1 of 2 answers the rules read as they "
                    "did (50%, below 90%); the run goes on with the rules alone"]


def test_empty_and_cut_off_answers_are_never_sent(fake_api: Any, tmp_path: Path) -> None:
    sent: list[str] = []

    def server(body: Any) -> str:
        sent.append(body["messages"][-1]["content"])
        return "NONE"

    fake_api.content = server
    answers = {"i0": "", "i1": "   ", "i2": "<think>True is", "i3": "Maybe False."}
    config = RunConfig(suite="toy-judged", model="mock", reader=f"judge-all:{spec(fake_api.url)}")
    evaluate(config, MockBackend(lambda req: answers[req.messages[-1].content]), tmp_path / "r")
    assert len(sent) == 1 and "Maybe False." in sent[0]


@pytest.mark.slow
def test_the_embedded_smollm2_as_judge_gives_no_wrong_label(tmp_path: Path) -> None:
    """SmolLM2-135M echoes its question and ends in a label: its gate refuses it (or, should it ever
    agree with the rules, no label it gives is wrong); either way the gate is in meta.json.
    """
    config = RunConfig(suite="toy-judged", model="mock", reader="judge:smollm2-135m")
    evaluate(config, MockBackend(model), tmp_path / "r")
    gate = json.loads((tmp_path / "r" / "meta.json").read_text())["judge_gate"]
    assert gate["sample"] == 2 and gate["threshold"] == 0.9
    judged = [r for r in records(tmp_path / "r").values() if r.detail.get(JUDGED)]
    assert gate["used"] or not judged
    assert all(r.label == r.gold for r in judged)
