"""Competence after thinking, the twins' making without a model: request keys, the replay's text,
the option's shape, a generation record read as a replay (or refused, with its reason), and the
refusals before anything is scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.conditions.after_thinking import AfterThinkingAxis, ReplaySource, Thoughts, _replay
from lingdiag.errors import ConfigError
from lingdiag.records import ChatMessage, ItemRecord, LoglikelihoodRequest
from lingdiag.rundir import ModelIdentity
from lingdiag.thinking import DEFAULT_TAGS, Thinking, ThinkTags

MESSAGES = (ChatMessage("user", "Premise: Ann was baking. Hypothesis: Ann baked. True, False or Unknown?"),)


def test_an_empty_prefix_keeps_todays_key_byte_for_byte() -> None:
    plain = LoglikelihoodRequest("", "True", messages=MESSAGES)
    # The key as lingdiag wrote it before replays existed (the cache and records depend on it).
    assert json.dumps(plain.key(), sort_keys=True) == json.dumps(
        {"kind": "loglikelihood", "context": "", "continuation": "True",
         "messages": [{"role": "user", "content": MESSAGES[0].content}]}, sort_keys=True)
    replayed = LoglikelihoodRequest("", "True", messages=MESSAGES, assistant_prefix="<think>\nhm\n</think>\n\n",
                                    thinking=Thinking.parse("on"))
    assert replayed.key()["assistant_prefix"] == "<think>\nhm\n</think>\n\n"
    assert replayed.key()["thinking"]["setting"] == "on"
    assert replayed.key() != plain.key()
    with pytest.raises(ValueError, match="needs chat messages"):
        LoglikelihoodRequest("The cat", " sat", assistant_prefix="<think>\nhm\n</think>\n\n")


def test_the_replay_follows_the_opened_turn_and_never_opens_the_block_twice() -> None:
    prefix = DEFAULT_TAGS.wrap("One could say True.")
    assert prefix == "<think>\nOne could say True.\n</think>\n\n"
    assert DEFAULT_TAGS.after("<|im_start|>assistant\n", prefix) == "<|im_start|>assistant\n" + prefix
    # A template that opened the block itself (DeepSeek-R1's) is not given a second opening tag.
    assert DEFAULT_TAGS.after("<|im_start|>assistant\n<think>\n", prefix) == \
        "<|im_start|>assistant\n<think>\nOne could say True.\n</think>\n\n"
    other = ThinkTags("<reasoning>", "</reasoning>")
    assert other.wrap("x") == "<reasoning>\nx\n</reasoning>\n\n"


def test_the_option_names_a_run_and_optionally_its_condition(tmp_path: Path) -> None:
    assert ReplaySource.parse("runs/gen") == ReplaySource(Path("runs/gen"))
    assert ReplaySource.parse("runs/gen:zero-shot/thinking-budget-8") == \
        ReplaySource(Path("runs/gen"), "zero-shot/thinking-budget-8")
    odd = tmp_path / "a:b"
    odd.mkdir()
    assert ReplaySource.parse(str(odd)) == ReplaySource(odd)  # a directory named with a colon is taken whole


def _record(output: object, error: str | None = None) -> ItemRecord:
    return ItemRecord(condition="zero-shot/thinking-on", axes={}, item_id="A1", tags={}, fields={},
                      prompts=[[{"role": "user", "content": MESSAGES[0].content}]], outputs=[output],
                      label="False", detail={}, gold="False", correct=True, error=error)


def test_only_completed_thinking_is_replayed_and_every_other_record_says_why() -> None:
    reason, replay = _replay(_record({"text": "False", "reasoning": " It was not finished. ",
                                      "reasoning_tokens": 6}), "gen", DEFAULT_TAGS)
    assert reason == "" and replay is not None
    assert replay.prefix == "<think>\nIt was not finished.\n</think>\n\n"
    assert replay.messages == MESSAGES
    assert replay.source.recorded() == {"run": "gen", "condition": "zero-shot/thinking-on", "item_id": "A1",
                                        "label": "False"}
    cases = {"unfinished": {"text": "", "reasoning": "It was", "reasoning_tokens": 8, "unfinished": True},
             "no thinking": "False"}
    for expected, output in cases.items():
        assert _replay(_record(output), "gen", DEFAULT_TAGS) == (expected, None)
    hidden = {"text": "False", "reasoning_tokens": 120}  # a hosted model's: only its length is known
    assert _replay(_record(hidden), "gen", DEFAULT_TAGS) == ("no thinking", None)
    assert _replay(_record({"error": "timeout"}, error="timeout"), "gen", DEFAULT_TAGS) == ("failed", None)


def test_another_model_is_refused_in_one_line() -> None:
    thoughts = Thoughts(Path("runs/gen"), "zero-shot/thinking-on", "on", DEFAULT_TAGS,
                        ModelIdentity({"backend": "hf", "model": "smollm2-135m", "weights_sha256": "ab"}), {}, {}, "")
    thoughts.check_model(ModelIdentity({"backend": "hf", "model": "smollm2-135m", "weights_sha256": "ab",
                                        "dtype": "bfloat16"}))  # another dtype is the same model
    for other in ({"backend": "hf", "model": "gemma3-270m", "weights_sha256": "cd"},
                  {"backend": "hf", "model": "smollm2-135m", "weights_sha256": "cd"}):
        with pytest.raises(ConfigError, match="replays the scored model's own thinking") as e:
            thoughts.check_model(ModelIdentity(other))
        assert "\n" not in str(e.value)


def test_the_table_names_every_item_not_scored() -> None:
    note = AfterThinkingAxis().note
    assert note({"zero-shot/loglik/after-thinking": {}}) == ""
    line = note({"zero-shot/loglik/after-thinking": {"unfinished": ["A1", "B2"], "missing from the run": ["C3"]}})
    assert "unfinished 2 (A1, B2)" in line and "missing from the run 1 (C3)" in line


