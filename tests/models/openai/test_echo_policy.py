"""The scoring policy over an OpenAI-compatible server's echoed prompt log-probs.

A real HTTP server on 127.0.0.1 plays a word-level model: it splits the echoed prompt at
spaces (each token keeps its leading space, as GPT-2-style tokenizers do), gives token k the
log-prob -k/10 - 1 and the first token none, and reports each token's character offset.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from lingdiag.errors import CapabilityError
from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions
from lingdiag.prompts.regions import join, surprisals
from lingdiag.records import ChatMessage, GenerationRequest, LoglikelihoodRequest
from lingdiag.scoring import policy

BOS = "<s>"


def echo(prompt: str) -> dict[str, object]:
    pieces = [(m.start(), m.group()) for m in re.finditer(r"<s>|\s*[^\s<]+", prompt)]
    return {"tokens": [t for _, t in pieces], "text_offset": [o for o, _ in pieces],
            "token_logprobs": [None] + [-k / 10 - 1 for k in range(1, len(pieces))],
            "top_logprobs": [None] + [{} for _ in pieces[1:]]}


@pytest.fixture()
def url(fake_api: Any) -> str:
    fake_api.logprobs = lambda request: echo(request["prompt"])
    return str(fake_api.url)


def backend(url: str) -> OpenAIBackend:
    return OpenAIBackend("word-model", url, OpenAIOptions(bos_text=BOS, verify_prompt_logprobs=False,
                                                           completions=True))


def test_policies_over_echo(url: str) -> None:
    b = backend(url)
    text = "The cat sat"
    default, bos, lm_eval, minicons = b.loglikelihood([
        LoglikelihoodRequest("", text), LoglikelihoodRequest("", text, policy=policy("bos")),
        LoglikelihoodRequest("", text, policy=policy("lm-eval")),
        LoglikelihoodRequest("", text, policy=policy("minicons"))])
    # "<s>The cat sat": three scored tokens (k = 1, 2, 3) after the start token.
    assert default.n_tokens == bos.n_tokens == 3 and default.logprob == pytest.approx(-1.1 - 1.2 - 1.3)
    assert lm_eval.n_tokens == 3  # "<s>", " The", " cat", " sat"
    # No start token: "The" opens the text, has no log-prob and is not scored.
    assert minicons.n_tokens == 2 and minicons.logprob == pytest.approx(-1.1 - 1.2)
    # The default policy puts the start token only before an empty context; bos before any.
    ctx_default, ctx_bos = b.loglikelihood([LoglikelihoodRequest("The cat", " sat"),
                                            LoglikelihoodRequest("The cat", " sat", policy=policy("bos"))])
    assert ctx_default.logprob == pytest.approx(-1.2) and ctx_bos.logprob == pytest.approx(-1.3)


def test_per_token_spans_give_region_surprisal(url: str) -> None:
    joined = join(["The cat", "sat down"])
    (r,) = backend(url).loglikelihood([LoglikelihoodRequest("", joined.text, per_token=True,
                                                            policy=policy("lm-eval"))])
    assert r.token_spans == ((-1, 3), (3, 7), (7, 11), (11, 16))  # " The" starts at the added space
    assert r.token_logprobs == pytest.approx((-1.1, -1.2, -1.3, -1.4))
    assert r.token_spans is not None and r.token_logprobs is not None
    bits = surprisals(joined, r.token_spans, r.token_logprobs)
    assert bits == pytest.approx([(1.1 + 1.2) / 0.6931471805599453, (1.3 + 1.4) / 0.6931471805599453])


def test_whitespace_correction_is_refused(url: str) -> None:
    with pytest.raises(CapabilityError, match="whole next-token distribution"):
        backend(url).loglikelihood([LoglikelihoodRequest("", "A b", policy=policy("bos+ws"), per_token=True)])


@pytest.mark.parametrize("spelled", [True, False])
def test_chat_context_over_echo(fake_api: Any, smollm2: Any, spelled: bool) -> None:
    """A chat context rendered with SmolLM2's template: the server tokenizes the prompt as SmolLM2 does
    and either spells special tokens in its echo (vLLM) or leaves their text out of tokens and offsets
    (llama-cpp-python); both score the continuation's own tokens, spans relative to it."""
    tokenizer = smollm2.tokenizer
    specials = set(tokenizer.all_special_ids)

    def echo_tokens(request: dict[str, Any]) -> dict[str, object]:
        enc = tokenizer(request["prompt"], add_special_tokens=False, return_offsets_mapping=True)
        tokens, offsets, at = [], [], 0
        for i, (a, b) in zip(enc["input_ids"], enc["offset_mapping"], strict=True):
            text = request["prompt"][a:b] if spelled or i not in specials else ""
            tokens.append(text)
            offsets.append(at)
            at += len(text)
        return {"tokens": tokens, "text_offset": offsets,
                "token_logprobs": [None] + [-k / 10 - 1 for k in range(1, len(tokens))],
                "top_logprobs": [None] + [{} for _ in tokens[1:]]}

    fake_api.logprobs = echo_tokens
    b = OpenAIBackend("smollm2", fake_api.url, OpenAIOptions(verify_prompt_logprobs=False, completions=True,
                                                              tokenizer=smollm2.identity["path"]))
    messages = (ChatMessage("user", "Is it raining?"),)
    (r,) = b.loglikelihood([LoglikelihoodRequest("", "Unknown.", messages=messages, per_token=True,
                                                 policy=policy("lm-eval"))])  # no prefix nor space: the template's
    n = len(tokenizer(smollm2.render(GenerationRequest(messages=messages)) + "Unknown.",
                      add_special_tokens=False)["input_ids"])
    assert r.token_spans == ((0, 7), (7, 8))  # "Unknown", "."
    assert r.token_logprobs == pytest.approx((-(n - 2) / 10 - 1, -(n - 1) / 10 - 1))


def test_replayed_thinking_opens_the_assistant_turn_and_is_not_scored(fake_api: Any, smollm2: Any) -> None:
    """Competence after thinking over echo: the text sent is the rendered chat prompt, the replayed
    trace, then the continuation; only the continuation's tokens are scored."""
    tokenizer = smollm2.tokenizer
    sent: list[str] = []

    def echo_tokens(request: dict[str, Any]) -> dict[str, object]:
        sent.append(request["prompt"])
        enc = tokenizer(request["prompt"], add_special_tokens=False, return_offsets_mapping=True)
        n = len(enc["input_ids"])
        return {"tokens": [request["prompt"][a:b] for a, b in enc["offset_mapping"]],
                "text_offset": [a for a, _ in enc["offset_mapping"]],
                "token_logprobs": [None] + [-k / 10 - 1 for k in range(1, n)], "top_logprobs": [None] * n}

    fake_api.logprobs = echo_tokens
    b = OpenAIBackend("smollm2", fake_api.url, OpenAIOptions(verify_prompt_logprobs=False, completions=True,
                                                              tokenizer=smollm2.identity["path"]))
    messages = (ChatMessage("user", "Is it raining?"),)
    prefix = "<think>\nThe sky is grey.\n</think>\n\n"
    plain, after = b.loglikelihood([LoglikelihoodRequest("", "True", messages=messages),
                                    LoglikelihoodRequest("", "True", messages=messages, assistant_prefix=prefix)])
    rendered = smollm2.render(GenerationRequest(messages=messages))
    assert sorted(sent) == sorted([rendered + "True", rendered + prefix + "True"])  # sent concurrently
    n = len(tokenizer(rendered + prefix + "True", add_special_tokens=False)["input_ids"])
    assert after.n_tokens == plain.n_tokens == 1  # "True" alone, after the replay
    assert after.logprob == pytest.approx(-(n - 1) / 10 - 1) and after.logprob != plain.logprob
