"""Reasoning models behind an OpenAI-compatible server: thinking is split from the answer before any
parser runs, for every style a server answers in (vLLM's two fields, inline tags, a block the
template opened, an unclosed block, hidden reasoning with only a token count, gpt-oss's channels),
through ``lingdiag run`` of each built-in suite that generates. The same answers read without the
separation (``--think-tags none``) give today's records: unparsed (a label inside the thinking
was once picked; the answer reader refuses it as hedged).

The fake server is a real HTTP server on 127.0.0.1 (``helpers.serve``) answering as reasoning models do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Reply, serve

from lingdiag.config import RunConfig
from lingdiag.engine.run import run

SRC = str(Path(__file__).resolve().parents[1] / "src")


class Reasoner:
    """What the server answers: ``style`` says where the thinking goes."""

    def __init__(self) -> None:
        self.style = "field"
        self.answer = "False"
        self.thinking = "One could say the label is True, as he was fixing it ... but not necessarily."
        self.bodies: list[dict[str, Any]] = []
        self.url = ""

    def choice(self) -> tuple[dict[str, Any], dict[str, Any], str]:
        """``(message, usage, finish_reason)`` of the next answer."""
        usage: dict[str, Any] = {"prompt_tokens": 30, "completion_tokens": 40}
        tokens = {"completion_tokens_details": {"reasoning_tokens": 33}}
        style, answer, thinking = self.style, self.answer, self.thinking
        if style == "field":
            return {"content": answer, "reasoning": thinking}, usage | tokens, "stop"
        if style == "field-old":
            return {"content": answer, "reasoning_content": thinking}, usage | tokens, "stop"
        if style == "field-unclosed":
            return {"content": None, "reasoning": thinking}, usage, "length"
        if style == "inline":
            return {"content": f"<think>\n{thinking}\n</think>\n\n{answer}"}, usage, "stop"
        if style == "opened":  # the chat template wrote <think>: only the closing tag comes back
            return {"content": f"{thinking}\n</think>\n\n{answer}"}, usage, "stop"
        if style == "unclosed":
            return {"content": f"<think>\n{thinking}"}, usage, "length"
        if style == "hidden":  # o-series: billed, never shown
            return {"content": answer}, usage | {"completion_tokens_details": {"reasoning_tokens": 512}}, "stop"
        if style == "field-empty-inline":  # an empty field, the trace left inline in the content
            return {"content": f"<think>{thinking}</think> {answer}", "reasoning_content": ""}, usage, "stop"
        if style == "field-and-inline":  # a separated trace, and a second one inline
            return {"content": f"<think>{thinking}</think>{answer}", "reasoning": "first"}, usage | tokens, "stop"
        if style == "empty-block":  # Qwen3 with thinking off
            return {"content": f"<think>\n\n</think>\n\n{answer}"}, usage, "stop"
        if style == "empty-field":
            return {"content": answer, "reasoning": ""}, usage | {"completion_tokens_details": {
                "reasoning_tokens": 0}}, "stop"
        if style == "mentions-channel":
            return {"content": f"{answer}\n\n(no <|channel|>final<|message|> markers here)"}, usage, "stop"
        if style == "commentary-once" and len(self.bodies) == 1:  # one tool call among valid answers
            return {"content": "<|channel|>commentary to=functions.lookup<|message|>{}<|call|>"}, usage, "stop"
        if style in ("harmony", "commentary-once"):
            return {"content": f"<|channel|>analysis<|message|>{thinking}<|end|><|start|>assistant"
                               f"<|channel|>final<|message|>{answer}<|return|>"}, usage, "stop"
        raise AssertionError(style)


@pytest.fixture()
def reasoner() -> Iterator[Reasoner]:
    """A real OpenAI-compatible server on 127.0.0.1 answering as a reasoning model."""
    state = Reasoner()

    def post(path: str, request: Any) -> Reply:
        state.bodies.append(request)
        message, usage, finish = state.choice()
        choice: dict[str, Any]
        if path.endswith("/chat/completions"):
            choice = {"message": {"role": "assistant", **message}}
        else:  # /completions has no reasoning field: the server returns the raw text
            trace = message.get("reasoning", message.get("reasoning_content"))
            text = message["content"] or ""
            choice = {"text": text if trace is None else f"<think>{trace}</think>{text}" if text else
                      f"<think>{trace}"}
        return 200, {"choices": [{"index": 0, "finish_reason": finish, **choice}], "usage": usage}

    with serve(post) as url:
        state.url = url
        yield state


SUITES = {
    # suite: (axes, the answer, a thinking that names another label first)
    "imperfective": ({"strategy": ["zero-shot"]}, "False",
                     "One could say the label is True, as he was fixing it ... but not necessarily."),
    "cxnli": ({"exp": ["1"], "setting": ["zero"]}, "contradiction",
              "The relation is entailment at first sight; no: the relation is contradiction."),
    "explica": ({"task": ["cloze"], "shots": ["0"], "decoding": ["greedy"]}, "because",
                "Perhaps so, or then; the second event causes the first, so the answer is"),
}


def _run(reasoner: Reasoner, suite: str, out: Path, **config: Any) -> list[dict[str, Any]]:
    axes, reasoner.answer, reasoner.thinking = SUITES[suite]
    cfg = RunConfig(suite=suite, model=f"openai:m@{reasoner.url}", limit=2,
                    axes={**axes, **config.pop("axes", {})}, model_options={"max_retries": 0}, **config)
    run(cfg, out, cache=False)
    return [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]


ANSWERED = ("field", "field-old", "inline", "opened", "harmony")


@pytest.mark.parametrize("suite", sorted(SUITES))
@pytest.mark.parametrize("style", ANSWERED)
def test_the_answer_is_read_and_the_thinking_kept(reasoner: Reasoner, tmp_path: Path, suite: str,
                                                  style: str) -> None:
    reasoner.style = style
    records = _run(reasoner, suite, tmp_path / "run")
    assert records and all(r["label"] == SUITES[suite][1] for r in records), [r["label"] for r in records]
    for r in records:
        output = r["outputs"][0]
        assert output["text"] == SUITES[suite][1]
        assert output["reasoning"] == SUITES[suite][2]
        assert output.get("reasoning_tokens") == (33 if style.startswith("field") else None)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert all(m["n_unfinished"] == 0 and m["n_unparsed"] == 0 for m in metrics.values())


@pytest.mark.parametrize("suite", sorted(SUITES))
@pytest.mark.parametrize("style", ["unclosed", "field-unclosed"])
def test_thinking_cut_off_is_unfinished_never_a_label(reasoner: Reasoner, tmp_path: Path, suite: str,
                                                      style: str) -> None:
    reasoner.style = style
    records = _run(reasoner, suite, tmp_path / "run")
    assert all(r["label"] == "unfinished" and r["correct"] is False for r in records)
    assert all(r["outputs"][0]["unfinished"] is True and r["outputs"][0]["reasoning_tokens"] == 40 for r in records)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    for m in metrics.values():
        assert (m["n_unfinished"], m["n_unparsed"], m["unfinished_rate"]) == (2, 0, 1.0)
    # Opened by the not-interpretable note (every answer unfinished), then the unfinished counts.
    head = (tmp_path / "run" / "table.md").read_text().split("\n\n")
    assert head[0].startswith("**Not interpretable**") and head[1].startswith("**Unfinished thinking**")


def test_hidden_reasoning_keeps_its_token_count(reasoner: Reasoner, tmp_path: Path) -> None:
    reasoner.style = "hidden"
    records = _run(reasoner, "imperfective", tmp_path / "run")
    assert [r["label"] for r in records] == ["False", "False"]
    assert all(r["outputs"][0] == {"text": "False", "reasoning_tokens": 512} for r in records)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["zero-shot"]["reasoning_tokens_mean"] == 512


# An unclosed trace read raw once gave "True", picked from inside the thinking ("One could say the
# label is True, …"); the answer reader refuses it as hedged (issue 54). A closed trace read raw is a
# discussion that only weighs True ("could say … but not necessarily") before the answer on its own
# line, so the reader takes that answer, False, as a careful reader does (issue 65, ``parse.weigh``).
@pytest.mark.parametrize(("style", "today"), [("inline", "False"), ("opened", "False"), ("unclosed", "unparsed")])
def test_without_separation_the_records_are_todays(reasoner: Reasoner, tmp_path: Path, style: str,
                                                   today: str) -> None:
    """The difference the separation makes: read raw, the thinking is parsed as the answer."""
    reasoner.style = style
    raw = _run(reasoner, "imperfective", tmp_path / "raw", think_tags="none")
    assert [r["label"] for r in raw] == [today, today]
    assert all(isinstance(r["outputs"][0], str) and "<think>" in r["outputs"][0] or "</think>" in r["outputs"][0]
               for r in raw)
    separated = _run(reasoner, "imperfective", tmp_path / "separated")
    assert [r["label"] for r in separated] == (["unfinished"] * 2 if style == "unclosed" else ["False"] * 2)


def test_other_tags_by_option(reasoner: Reasoner, tmp_path: Path) -> None:
    reasoner.style = "hidden"  # the content carries other tags; the server counts the reasoning
    reasoner.answer = "<reasoning>so the label is True?</reasoning>False"
    cfg = RunConfig(suite="imperfective", model=f"openai:m@{reasoner.url}", limit=1,
                    axes={"strategy": ["zero-shot"]}, think_tags="<reasoning>,</reasoning>")
    run(cfg, tmp_path / "run", cache=False)
    record = json.loads((tmp_path / "run" / "items.jsonl").read_text())
    assert record["label"] == "False"
    assert record["outputs"][0] == {"text": "False", "reasoning": "so the label is True?", "reasoning_tokens": 512}
    assert json.loads((tmp_path / "run" / "meta.json").read_text())["config"]["think_tags"] == \
        "<reasoning>,</reasoning>"


def test_thinking_axis_reaches_the_server_and_every_record(reasoner: Reasoner, tmp_path: Path) -> None:
    """``--thinking off,on,budget:64,effort:high`` through the CLI: four conditions, each record named,
    the switch, the effort and the caps in the request bodies, the settings in meta.json."""
    reasoner.style = "field"
    out = tmp_path / "run"
    env = {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{reasoner.url}",
         "--strategy", "zero-shot", "--limit", "2", "--out", str(out), "--thinking", "off,on,budget:64,effort:high",
         "-o", "max_new_tokens=16"], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert sorted({r["condition"] for r in records}) == [
        "zero-shot/thinking-budget-64", "zero-shot/thinking-effort-high", "zero-shot/thinking-off",
        "zero-shot/thinking-on"]
    assert all(r["axes"]["thinking"] in ("off", "on", "budget:64", "effort:high") for r in records)
    assert all(r["label"] == "False" for r in records)
    chat = [b for b in reasoner.bodies if "messages" in b]
    assert {json.dumps(b.get("chat_template_kwargs"), sort_keys=True) for b in chat} == {
        '{"enable_thinking": false}', '{"enable_thinking": true}', "null"}
    assert {b.get("reasoning_effort") for b in chat} == {None, "high"}
    assert {b["max_tokens"] for b in chat} == {16, 8192 + 16, 64 + 16}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["thinking"]["zero-shot/thinking-budget-64"] == {
        "setting": "budget:64", "budget": 64, "effort": "", "tags": ["<think>", "</think>"], "forced": True}


def test_a_bad_setting_is_one_line(reasoner: Reasoner, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", f"openai:m@{reasoner.url}",
         "--thinking", "budget:lots", "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
        env=env)
    assert proc.returncode == 2
    assert "budget:lots" in proc.stderr and "Traceback" not in proc.stderr


def test_suite_files_take_the_axis_too(reasoner: Reasoner, tmp_path: Path) -> None:
    """A suite file's generated condition runs under each setting with no code in the file."""
    reasoner.style, reasoner.answer = "inline", "A"
    reasoner.thinking = "B) for an hour? No: a loaf is bounded, so A"
    suite = Path(__file__).resolve().parents[1] / "examples" / "suites" / "telicity-adverbials.yaml"
    cfg = RunConfig(suite=str(suite), model=f"openai:m@{reasoner.url}", limit=2,
                    axes={"format": ["choice"], "thinking": ["off", "on"]})
    run(cfg, tmp_path / "run", cache=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [(r["condition"], r["label"]) for r in records] == [
        ("choice/thinking-off", "in"), ("choice/thinking-off", "in"), ("choice/thinking-on", "in"),
        ("choice/thinking-on", "in")]
    assert all(r["outputs"][0]["reasoning"] == reasoner.thinking for r in records)


def test_a_label_is_never_read_from_a_trace_a_server_left_inline(reasoner: Reasoner, tmp_path: Path) -> None:
    """An empty ``reasoning_content`` is not "the server separated it"; nor is a non-empty one the last trace."""
    for style in ("field-empty-inline", "field-and-inline"):
        reasoner.style = style
        axes, _, _ = SUITES["imperfective"]
        reasoner.answer, reasoner.thinking = "I cannot decide.", "The answer is True."
        cfg = RunConfig(suite="imperfective", model=f"openai:m@{reasoner.url}", limit=2, axes=axes,
                        model_options={"max_retries": 0})
        run(cfg, tmp_path / style, cache=False)
        records = [json.loads(line) for line in (tmp_path / style / "items.jsonl").read_text().splitlines()]
        assert [r["label"] for r in records] == ["unparsed", "unparsed"], style
        assert all(r["outputs"][0]["text"] == "I cannot decide." for r in records)
        assert all(r["outputs"][0]["reasoning"].endswith("The answer is True.") for r in records)


@pytest.mark.parametrize("style", ["empty-block", "empty-field"])
def test_an_empty_block_is_no_thinking(reasoner: Reasoner, tmp_path: Path, style: str) -> None:
    reasoner.style = style
    records = _run(reasoner, "imperfective", tmp_path / "run")
    assert [r["label"] for r in records] == ["False", "False"]
    assert all(r["outputs"][0] == "False" for r in records)  # a plain answer: no reasoning, no count
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert "reasoning_tokens_mean" not in metrics["zero-shot"]


def test_an_answer_mentioning_a_channel_is_read_as_it_is(reasoner: Reasoner, tmp_path: Path) -> None:
    reasoner.style = "mentions-channel"
    for tags in ("<think>,</think>", "none"):
        records = _run(reasoner, "imperfective", tmp_path / tags.replace("/", "").replace(",", "-").strip("<>"),
                       think_tags=tags)
        assert [r["label"] for r in records] == ["False", "False"]
        assert all(isinstance(r["outputs"][0], str) and "<|channel|>" in r["outputs"][0] for r in records)


def test_one_tool_call_fails_its_item_and_the_run_finishes(reasoner: Reasoner, tmp_path: Path) -> None:
    reasoner.style = "commentary-once"
    axes, reasoner.answer, reasoner.thinking = SUITES["imperfective"]
    cfg = RunConfig(suite="imperfective", model=f"openai:m@{reasoner.url}", limit=4, axes=axes,
                    model_options={"max_retries": 0, "concurrency": 1})
    run(cfg, tmp_path / "run", cache=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert len(records) == 4
    failed = [r for r in records if r["error"]]
    assert len(failed) == 1 and "'commentary'" in failed[0]["error"] and failed[0]["label"] == "unparsed"
    assert [r["label"] for r in records if not r["error"]] == ["False"] * 3
