"""Splitting a thinking model's trace from its answer, and the thinking setting as requests carry it."""

from __future__ import annotations

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.openai.prices import request_tokens
from lingdiag.parse.labels import parse_label
from lingdiag.parse.thinking import separate
from lingdiag.records import ChatMessage, Generation, GenerationRequest, response_from_json, response_to_json
from lingdiag.thinking import THINKING_CAP, Thinking, ThinkTags

TRACE = "so the label is True ... but not necessarily"


@pytest.mark.parametrize("text", [f"<think>\n{TRACE}\n</think>\n\nFalse", f"{TRACE}\n</think>\n\nFalse",
                                  f"  <think>{TRACE}</think>False"])
def test_inline_trace_is_split_from_the_answer(text: str) -> None:
    g = separate(Generation(text=text, n_tokens=30))
    assert (g.text, g.reasoning, g.unfinished) == ("False", TRACE, False)


def test_the_label_parser_reads_only_the_answer() -> None:
    raw = f"<think>{TRACE}</think>\nFalse"
    labels = ("True", "False", "Unknown")
    assert parse_label(separate(Generation(text=raw)).text, labels)[0] == "False"


def test_an_unclosed_trace_is_unfinished_with_no_answer() -> None:
    g = separate(Generation(text=f"<think>\n{TRACE}", n_tokens=512))
    assert (g.text, g.reasoning, g.unfinished, g.reasoning_tokens) == ("", TRACE, True, 512)


def test_text_without_tags_is_left_alone_and_none_tags_read_raw() -> None:
    plain = Generation(text="False", n_tokens=1)
    assert separate(plain) is plain
    inline = Generation(text=f"<think>{TRACE}</think>False")
    assert separate(inline, None) is inline


def test_other_tags() -> None:
    tags = ThinkTags.parse("<reasoning>, </reasoning>")
    assert tags == ThinkTags("<reasoning>", "</reasoning>")
    assert separate(Generation(text=f"<reasoning>{TRACE}</reasoning> True"), tags).text == "True"
    assert ThinkTags.parse("none") is None
    for bad in ("<think>", "a,a", ",x"):
        with pytest.raises(ConfigError, match="OPEN,CLOSE"):
            ThinkTags.parse(bad)


def test_gpt_oss_channels() -> None:
    text = (f"<|channel|>analysis<|message|>{TRACE}<|end|><|start|>assistant<|channel|>final<|message|>"
            "Unknown<|return|>")
    g = separate(Generation(text=text))
    assert (g.text, g.reasoning) == ("Unknown", TRACE)
    cut = separate(Generation(text=f"<|channel|>analysis<|message|>{TRACE}", n_tokens=64))
    assert cut.unfinished and cut.text == "" and cut.reasoning_tokens == 64
    tool = separate(Generation(text="<|channel|>commentary to=functions.x<|message|>{}<|call|>"))
    assert tool.text == "" and tool.error is not None and "'commentary'" in tool.error  # a failed item, no abort


def test_a_backends_own_split_is_kept() -> None:
    g = Generation(text="False", reasoning="the server's", reasoning_tokens=9)
    assert separate(g) is g


@pytest.mark.parametrize("field", ["", "  \n", "the server's"])
def test_an_inline_trace_after_a_servers_field_is_thinking_too(field: str) -> None:
    """An empty field is not "the server separated it"; a second inline trace is still a trace."""
    g = separate(Generation(text="<think>The answer is True.</think> I cannot decide.", reasoning=field))
    assert g.text == "I cannot decide."
    assert g.reasoning == ("the server's\n\n" if field.strip() else "") + "The answer is True."
    assert parse_label(g.text, ("True", "False"))[0] == "unparsed"


def test_every_trace_before_the_last_closing_tag_is_thinking() -> None:
    g = separate(Generation(text="<think>a</think>The answer is True<think>b, so False</think>\nUnknown"))
    assert g.text == "Unknown" and "True" in (g.reasoning or "")
    reopened = separate(Generation(text="<think>a</think>True <think>wait", n_tokens=7))
    assert (reopened.text, reopened.unfinished, reopened.reasoning_tokens) == ("", True, 7)


@pytest.mark.parametrize("g", [Generation(text="<think>\n\n</think>\n\nTrue", n_tokens=9),
                               Generation(text="True", reasoning="", reasoning_tokens=0),
                               Generation(text="<think> </think>True", reasoning=" \n", reasoning_tokens=0),
                               Generation(text="<think>\u200b\u200f</think>True")])
def test_an_empty_block_or_field_is_no_thinking(g: Generation) -> None:
    out = separate(g)
    assert (out.text, out.reasoning, out.reasoning_tokens, out.unfinished) == ("True", None, None, False)


@pytest.mark.parametrize("text", ["The answer is True; gpt-oss would write <|channel|>final<|message|> here.",
                                  "True <|channel|>", "Answer: <|channel|>analysis<|message|>"])
def test_an_answer_that_mentions_a_channel_is_a_plain_answer(text: str) -> None:
    g = Generation(text=text, n_tokens=12)
    assert separate(g) is g
    assert separate(g, None) is g


def test_none_tags_read_no_channels() -> None:
    harmony = Generation(text="<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>"
                              "True<|return|>")
    assert separate(harmony, None) is harmony
    assert separate(harmony).text == "True"


@pytest.mark.parametrize(("value", "name", "budget"), [("off", "off", THINKING_CAP), ("on", "on", THINKING_CAP),
                                                       ("on:64", "on:64", 64), ("budget:8", "budget:8", 8),
                                                       ("effort:high", "effort:high", THINKING_CAP)])
def test_settings(value: str, name: str, budget: int) -> None:
    s = Thinking.parse(value)
    assert (s.name, s.budget) == (name, budget)


@pytest.mark.parametrize("value", ["budget:0", "budget:x", "effort:max", "maybe", "off:3"])
def test_bad_settings_are_one_line(value: str) -> None:
    with pytest.raises(ConfigError, match="valid settings"):
        Thinking.parse(value)


def test_requests_and_responses_without_thinking_keep_their_keys() -> None:
    request = GenerationRequest(messages=(ChatMessage("user", "Q"),), max_new_tokens=8)
    assert "thinking" not in request.key()
    thinking = GenerationRequest(messages=(ChatMessage("user", "Q"),), max_new_tokens=8,
                                 thinking=Thinking.parse("budget:8"))
    assert thinking.key()["thinking"]["setting"] == "budget:8" and thinking.key() != request.key()
    plain = Generation(text="False", n_tokens=1)
    assert response_to_json(plain) == {"type": "generation", "text": "False", "n_tokens": 1, "prompt_tokens": 0,
                                       "logprobs": None, "error": None}
    thought = Generation(text="False", reasoning=TRACE, reasoning_tokens=9, unfinished=False)
    assert response_from_json(response_to_json(thought)) == thought
    with pytest.raises(ValueError, match="reasoning_tokens"):
        response_from_json({**response_to_json(thought), "reasoning_tokens": "nine"})


def test_cost_estimates_count_the_thinking_budget() -> None:
    base = GenerationRequest(messages=(ChatMessage("user", "Q"),), max_new_tokens=8)
    assert request_tokens(GenerationRequest(messages=base.messages, max_new_tokens=8,
                                            thinking=Thinking.parse("budget:100")))[1] == 108
    assert request_tokens(GenerationRequest(messages=base.messages, max_new_tokens=8,
                                            thinking=Thinking.parse("off")))[1] == request_tokens(base)[1] == 8
