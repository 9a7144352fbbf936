"""Thinking on the transformers backend: the chat template's own switch, and budget forcing.

The embedded SmolLM2's files are linked into a temporary directory whose chat template has a
thinking switch written as the Qwen3 family's templates have it (``enable_thinking`` false
writes an empty ``<think></think>`` block after the assistant turn opens); it is loaded through
the ordinary ``hf:<dir>`` spec. No part of the model is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.run import run
from lingdiag.thinking import Thinking

QWEN3_LIKE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\n\n</think>\n\n' }}{% endif %}"
    "{% endif %}"
)
USER = "Premise: Ann was baking a cake. Hypothesis: Ann baked a cake. True, False or Unknown?"


def _linked(tmp_path_factory: pytest.TempPathFactory, template: str | None) -> Path:
    from lingdiag.models.embedded import ensure_converted

    try:
        source, _ = ensure_converted("smollm2-135m")
    except MissingDependency as e:
        pytest.skip(f"the embedded SmolLM2 is not installed: {e}")
    target = tmp_path_factory.mktemp("thinking-template")
    for f in source.iterdir():
        if f.name not in ("tokenizer_config.json", "chat_template.jinja"):
            (target / f.name).symlink_to(f)
    config = json.loads((source / "tokenizer_config.json").read_text())
    config["chat_template"] = template or (source / "chat_template.jinja").read_text()
    (target / "tokenizer_config.json").write_text(json.dumps(config))
    return target


@pytest.fixture(scope="module")
def thinking_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 with a Qwen3-like thinking switch in its chat template."""
    return _linked(tmp_path_factory, QWEN3_LIKE)


def _request(setting: str) -> GenerationRequest:
    return GenerationRequest(messages=(ChatMessage("user", USER),), max_new_tokens=4,
                             thinking=Thinking.parse(setting))


@pytest.mark.slow
def test_the_template_switch_renders_each_setting(thinking_dir: Path) -> None:
    b = load_backend(f"hf:{thinking_dir}")
    off, on = b.render(_request("off")), b.render(_request("on"))
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert on.endswith("<|im_start|>assistant\n") and on != off
    plain = b.render(GenerationRequest(messages=(ChatMessage("user", USER),)))
    assert plain == on  # no setting: the template's own default (thinking, for Qwen3)


@pytest.mark.slow
def test_budget_forcing_closes_the_block_after_exactly_n_tokens(thinking_dir: Path) -> None:
    b = load_backend(f"hf:{thinking_dir}")
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
    tokenizer = load_backend(f"hf:{thinking_dir}").loaded.tokenizer
    assert len(tokenizer(trace, add_special_tokens=False)["input_ids"]) == 8
    assert records[1]["label"] in ("unfinished", "unparsed", "True", "False", "Unknown")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert sorted(meta["thinking"]) == sorted(r["condition"] for r in records)
    assert result.metrics["zero-shot/thinking-budget-8"]["reasoning_tokens_mean"] == 8


@pytest.mark.slow
def test_thinking_asked_of_a_template_without_a_switch_is_one_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    b = load_backend(f"hf:{_linked(tmp_path_factory, None)}")
    assert b.render(_request("off")) == b.render(GenerationRequest(messages=(ChatMessage("user", USER),)))
    with pytest.raises(ConfigError, match="no thinking switch"):
        b.render(_request("on"))
    with pytest.raises(ConfigError, match="reasoning_effort"):
        b.render(_request("effort:low"))
