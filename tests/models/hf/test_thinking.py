"""Thinking on the transformers backend: the chat template's own switch, and budget forcing.

The embedded SmolLM2's files are linked into a temporary directory whose chat template has a
thinking switch written as the Qwen3 family's templates have it (``enable_thinking`` false
writes an empty ``<think></think>`` block after the assistant turn opens); it is loaded through
the ordinary ``hf:<dir>`` spec. No part of the model is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import QWEN3_LIKE_TEMPLATE, load_as, smollm2_with_template

from lingdiag.analysis import after_thinking
from lingdiag.config import RunConfig
from lingdiag.engine.run import plan, run
from lingdiag.errors import ConfigError
from lingdiag.models.hf import HFBackend
from lingdiag.models.hf.tokens import split_request
from lingdiag.records import ChatMessage, GenerationRequest, ItemRecord, LoglikelihoodRequest
from lingdiag.thinking import ChecksThinking, Thinking

USER = "Premise: Ann was baking a cake. Hypothesis: Ann baked a cake. True, False or Unknown?"


@pytest.fixture(scope="module")
def thinking_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 with a Qwen3-like thinking switch in its chat template."""
    return smollm2_with_template(tmp_path_factory, QWEN3_LIKE_TEMPLATE)


def _request(setting: str) -> GenerationRequest:
    return GenerationRequest(messages=(ChatMessage("user", USER),), max_new_tokens=4,
                             thinking=Thinking.parse(setting))


@pytest.mark.slow
def test_the_template_switch_renders_each_setting(thinking_dir: Path) -> None:
    b = load_as(HFBackend, f"hf:{thinking_dir}")
    off, on = b.render(_request("off")), b.render(_request("on"))
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert on.endswith("<|im_start|>assistant\n") and on != off
    plain = b.render(GenerationRequest(messages=(ChatMessage("user", USER),)))
    assert plain == on  # no setting: the template's own default (thinking, for Qwen3)


@pytest.mark.slow
def test_budget_forcing_closes_the_block_after_exactly_n_tokens(thinking_dir: Path) -> None:
    b = load_as(HFBackend, f"hf:{thinking_dir}")
    forced, = b.generate([_request("budget:8")])
    assert forced.reasoning_tokens == 8 and not forced.unfinished
    assert forced.reasoning
    # The forced trace is the greedy continuation after the opened block, 8 tokens of it.
    first, = b.generate([GenerationRequest(prompt=b.render(_request("on")) + "<think>\n", max_new_tokens=8)])
    assert forced.reasoning == first.text.strip()
    assert 8 < forced.n_tokens <= 8 + 4  # the thinking, then an answer of at most max_new_tokens
    capped, = b.generate([_request("on:8")])
    assert capped.unfinished and capped.text == "" and capped.reasoning_tokens == 8


@pytest.mark.slow
def test_three_settings_are_three_conditions_and_every_record_names_its_own(thinking_dir: Path,
                                                                            tmp_path: Path) -> None:
    config = RunConfig(suite="imperfective", model=f"hf:{thinking_dir}", limit=1, axes={
        "strategy": ["zero-shot"], "thinking": ["off", "on:12", "budget:8"]}, options={"max_new_tokens": 4})
    result = run(config, tmp_path / "run", cache=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [r["axes"]["thinking"] for r in records] == ["off", "on:12", "budget:8"]
    assert [r["condition"] for r in records] == ["zero-shot/thinking-off", "zero-shot/thinking-on-12",
                                                 "zero-shot/thinking-budget-8"]
    assert "reasoning" not in records[0]["outputs"][0]  # no thinking asked, none recorded
    assert records[2]["outputs"][0]["reasoning_tokens"] == 8
    # Each record shows the prompt its answer was generated from: three different texts.
    off, on, forced = (r["outputs"][0]["rendered_prompt"] for r in records)
    assert len({off, on, forced}) == 3
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # the switch off
    first = on.partition("<think>\n")[0] + "<think>\n"  # the prompt both thinking settings start from
    assert on.startswith(first) and forced.startswith(first)
    # Budget forcing: the first prompt, 8 thinking tokens, then the inserted closing tag.
    trace, closing, rest = forced[len(first):].partition("\n</think>\n\n")
    assert closing and rest == ""
    assert trace.strip() == records[2]["outputs"][0]["reasoning"]
    tokenizer = load_as(HFBackend, f"hf:{thinking_dir}").loaded.tokenizer
    assert len(tokenizer(trace, add_special_tokens=False)["input_ids"]) == 8
    assert records[1]["label"] in ("unfinished", "unparsed", "True", "False", "Unknown")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert sorted(meta["thinking"]) == sorted(r["condition"] for r in records)
    assert result.metrics["zero-shot/thinking-budget-8"]["reasoning_tokens_mean"] == 8


@pytest.mark.slow
def test_thinking_asked_of_a_template_without_a_switch_is_one_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    b = load_as(HFBackend, f"hf:{smollm2_with_template(tmp_path_factory, None)}")
    assert b.render(_request("off")) == b.render(GenerationRequest(messages=(ChatMessage("user", USER),)))
    with pytest.raises(ConfigError, match="no thinking switch"):
        b.render(_request("on"))
    with pytest.raises(ConfigError, match="reasoning_effort"):
        b.render(_request("effort:low"))
    # Asked before any request (the run asks it of every setting and replay before scoring anything).
    assert isinstance(b, ChecksThinking)
    b.check_thinking(Thinking.parse("off"))
    with pytest.raises(ConfigError, match="no thinking switch"):
        b.check_thinking(Thinking.parse("on"))
    out = tmp_path_factory.mktemp("refused") / "run"
    with pytest.raises(ConfigError, match="no thinking switch"):
        run(RunConfig(suite="imperfective", model=f"hf:{smollm2_with_template(tmp_path_factory, None)}", limit=2,
                      axes={"strategy": ["zero-shot"], "thinking": ["off", "on"]}), out, cache=False)
    assert not out.exists()  # refused before "off" was scored


@pytest.fixture(scope="module")
def generation_run(thinking_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished generation run with thinking: budget forcing (every trace completed) and a cap
    of 6 tokens (every trace cut: unfinished)."""
    out = tmp_path_factory.mktemp("generation") / "gen"
    run(RunConfig(suite="imperfective", model=f"hf:{thinking_dir}", limit=2, axes={
        "strategy": ["zero-shot"], "thinking": ["budget:8", "on:6"]}, options={"max_new_tokens": 4}), out, cache=False)
    return out


def _after(thinking_dir: Path, source: str, model: str = "") -> RunConfig:
    return RunConfig(suite="imperfective", model=model or f"hf:{thinking_dir}", limit=2, after_thinking=source,
                     axes={"strategy": ["zero-shot"], "scoring": ["loglik"]})


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_labels_scored_after_the_models_own_thinking(thinking_dir: Path, generation_run: Path, tmp_path: Path) -> None:
    config = _after(thinking_dir, f"{generation_run}:zero-shot/thinking-budget-8")
    out = tmp_path / "after"
    run(config, out, cache=False)
    generated = {r["item_id"]: r for r in _records(generation_run) if r["condition"] == "zero-shot/thinking-budget-8"}
    records = _records(out)
    plain = {r["item_id"]: r for r in records if r["condition"] == "zero-shot/loglik"}
    after = {r["item_id"]: r for r in records if r["condition"] == "zero-shot/loglik/after-thinking"}
    assert set(after) == set(plain) == set(generated) and len(after) == 2
    for item_id, r in after.items():
        assert r["axes"]["after_thinking"] == "zero-shot/thinking-budget-8"
        assert r["replays"] == {"run": "gen", "condition": "zero-shot/thinking-budget-8", "item_id": item_id,
                                "label": generated[item_id]["label"]}
        assert "replays" not in plain[item_id]  # the plain condition's records are as before
        # The same label words after the same prompt, but the thinking before them moves every log-prob.
        scores, before = r["detail"]["loglik"], plain[item_id]["detail"]["loglik"]
        assert set(scores) == {"True", "False", "Unknown"} and all(scores[lab] != before[lab] for lab in scores)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["after_thinking"] == {"zero-shot/loglik/after-thinking": {
        "run": str(generation_run), "condition": "zero-shot/thinking-budget-8", "setting": "budget:8",
        "not_scored": {}}}
    assert "zero-shot/loglik/after-thinking" in (out / "table.md").read_text()
    # The context scored: the generation's prompt, the replayed thinking in its tags, and nothing after.
    backend = load_as(HFBackend, f"hf:{thinking_dir}")
    lm = backend.loaded
    condition = next(c for c in plan(config).conditions if c.name == "zero-shot/loglik/after-thinking")
    item = next(it for it in condition.items if it.id in after)
    request = condition.strategy.render(item)[0]
    assert isinstance(request, LoglikelihoodRequest)
    split = split_request(lm, request)
    reasoning = generated[item.id]["outputs"][0]["reasoning"]
    prompt = backend.render(GenerationRequest(messages=request.messages, thinking=Thinking.parse("on")))
    assert lm.tokenizer.decode(split.ctx) == prompt + f"<think>\n{reasoning}\n</think>\n\n"
    assert split.cont == lm.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
    # What the generation itself answered from (budget forcing's closed block), up to the trace's own spacing.
    assert generated[item.id]["outputs"][0]["rendered_prompt"].startswith(prompt + "<think>\n")
    section = after_thinking.section([ItemRecord.from_json(json.dumps(r)) for r in records])
    assert "zero-shot/loglik/after-thinking" in section and "Agrees with generated answer" in section


@pytest.mark.slow
def test_unfinished_thinking_is_counted_named_and_never_scored(thinking_dir: Path, generation_run: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "after"
    run(_after(thinking_dir, f"{generation_run}:zero-shot/thinking-on-6"), out, cache=False)
    cut = sorted(r["item_id"] for r in _records(generation_run)
                 if r["condition"] == "zero-shot/thinking-on-6" and r["label"] == "unfinished")
    assert len(cut) == 2
    records = _records(out)
    assert {r["condition"] for r in records} == {"zero-shot/loglik"}  # no item scored without its replay
    meta = json.loads((out / "meta.json").read_text())
    assert meta["after_thinking"]["zero-shot/loglik/after-thinking"]["not_scored"] == {"unfinished": cut}
    assert f"unfinished 2 ({', '.join(cut)})" in (out / "table.md").read_text()


@pytest.mark.slow
def test_another_models_thinking_is_refused_in_one_line(thinking_dir: Path, generation_run: Path,
                                                        tmp_path: Path) -> None:
    config = _after(thinking_dir, f"{generation_run}:zero-shot/thinking-budget-8", model="smollm2-135m")
    with pytest.raises(ConfigError, match="own thinking") as e:
        run(config, tmp_path / "after", cache=False)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "after").exists()
    with pytest.raises(ConfigError, match="name the condition"):  # two conditions thought: which one is asked
        run(_after(thinking_dir, str(generation_run)), tmp_path / "after", cache=False)
