"""Competence after thinking, the twins' making without a model: request keys, the replay's text,
the option's shape, a generation record read as a replay (or refused, with its reason), and the
refusals before anything is scored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lingdiag.conditions.after_thinking import AfterThinkingAxis, ReplaySource, Thoughts, _replay
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import ConfigError, RunError
from lingdiag.models.mock import MockBackend
from lingdiag.records import ChatMessage, GenerationRequest, ItemRecord, LoglikelihoodRequest, output_from_json
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
                      prompts=[[{"role": "user", "content": MESSAGES[0].content}]], outputs=[output_from_json(output)],
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




def test_a_trace_that_already_holds_its_closing_tag_and_an_answer_is_not_replayed() -> None:
    output = {"text": "False", "reasoning": "It is True.\n</think>\nTrue", "reasoning_tokens": 9}
    assert _replay(_record(output), "gen", DEFAULT_TAGS) == ("closing tag inside the trace", None)
    other = ThinkTags("<reasoning>", "</reasoning>")
    assert _replay(_record({"text": "False", "reasoning": "x </reasoning> True"}), "gen", other)[1] is None
    assert _replay(_record({"text": "False", "reasoning": "x </think> True"}), "gen", other)[1] is not None


def _thought(r: GenerationRequest) -> str:
    return "<think>\nOne could say True.\n</think>\nFalse"


def _prefers(r: LoglikelihoodRequest) -> float:
    return -1.0 if r.continuation == "True" else -2.0


def _after_config(gen: Path) -> RunConfig:
    return RunConfig.model_validate({"suite": "imperfective", "model": "mock", "limit": 4,
                                     "after_thinking": f"{gen}:zero-shot/thinking-on",
                                     "axes": {"strategy": ["zero-shot"], "scoring": ["loglik"]}})


def _generation(gen: Path) -> None:
    evaluate(RunConfig(suite="imperfective", model="mock", limit=4, axes={"strategy": ["zero-shot"],
                                                                          "thinking": ["on"]}),
             MockBackend(_thought), gen)


def test_rerunning_after_the_source_traces_changed_is_refused(tmp_path: Path) -> None:
    gen, after = tmp_path / "gen", tmp_path / "after"
    _generation(gen)
    evaluate(_after_config(gen), MockBackend(loglik_fn=_prefers), after)
    checksums = json.loads((after / "meta.json").read_text())["dataset"]
    assert checksums[str(gen / "items.jsonl")] == hashlib.sha256((gen / "items.jsonl").read_bytes()).hexdigest()
    evaluate(_after_config(gen), MockBackend(loglik_fn=_prefers), after)  # the same source resumes
    items = gen / "items.jsonl"
    items.write_text(items.read_text().replace("One could say True.", "One could say False."))
    before = (after / "items.jsonl").read_bytes()
    with pytest.raises(RunError, match=rf"{after} was run on other data: {gen}/items.jsonl changed since") as e:
        evaluate(_after_config(gen), MockBackend(loglik_fn=_prefers), after)
    assert "\n" not in str(e.value)
    assert (after / "items.jsonl").read_bytes() == before


class NoSwitch(MockBackend):
    """A backend whose chat template has no thinking switch (as ``HFBackend.check_thinking`` says)."""

    def check_thinking(self, thinking: Thinking) -> None:
        if thinking.thinks:
            raise ConfigError(f"{self.name}: --thinking {thinking.name}: its chat template has no thinking switch")


def test_a_model_without_a_thinking_switch_is_refused_before_any_condition_is_scored(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    _generation(gen)
    scored: list[LoglikelihoodRequest] = []

    def counted(r: LoglikelihoodRequest) -> float:
        scored.append(r)
        return _prefers(r)

    with pytest.raises(ConfigError, match="no thinking switch"):
        evaluate(_after_config(gen), NoSwitch(loglik_fn=counted), tmp_path / "after")
    assert scored == [] and not (tmp_path / "after").exists()
    with pytest.raises(ConfigError, match="no thinking switch"):  # the thinking axis too, before "off" runs
        evaluate(RunConfig(suite="imperfective", model="mock", limit=4,
                           axes={"strategy": ["zero-shot"], "thinking": ["off", "on"]}),
                 NoSwitch(_thought), tmp_path / "gen2")
    assert not (tmp_path / "gen2").exists()
