"""Log-likelihoods with a chat context, on the real embedded SmolLM2: the context is the very
prompt generation gets, so the first generated token's log-prob is the score of that token."""

from __future__ import annotations

import pytest

from lingdiag.models.hf import HFBackend
from lingdiag.models.hf.tokens import split_request
from lingdiag.records import ChatMessage, GenerationRequest, LoglikelihoodRequest

pytestmark = pytest.mark.slow

MESSAGES = (ChatMessage("system", "You are a strict logician. Answer True, False or Unknown."),
            ChatMessage("user", "Premise: Ann was baking a cake, but the oven broke. Hypothesis: Ann baked a cake.\n"
                                "Please respond with ONLY one of the following options: \"True\", \"False\", or "
                                "\"Unknown\"."))


def test_chat_context_tokens_are_the_generation_prompt_tokens(smollm2: HFBackend) -> None:
    lm = smollm2.loaded
    prompt = lm.encode_prompt(GenerationRequest(messages=MESSAGES))
    split = split_request(lm, LoglikelihoodRequest("", "True", messages=MESSAGES))
    ctx, cont = split.ctx, split.cont
    assert ctx == prompt
    assert lm.tokenizer.decode(ctx).endswith("<|im_start|>assistant\n")  # the assistant turn is open
    assert cont == lm.tokenizer("True", add_special_tokens=False)["input_ids"]


def test_first_generated_token_scores_as_its_generation_log_prob(smollm2: HFBackend) -> None:
    (gen,) = smollm2.generate([GenerationRequest(messages=MESSAGES, max_new_tokens=1)])
    assert gen.logprobs is not None and gen.n_tokens == 1
    words = [gen.text, *(w for w in ("True", "False", "Unknown") if w != gen.text)]
    scored = smollm2.loglikelihood([LoglikelihoodRequest("", w, messages=MESSAGES) for w in words])
    # The same prompt tokens, so the same distribution: the greedy token's log-prob and its greedy flag.
    assert scored[0].n_tokens == 1 and scored[0].is_greedy
    assert scored[0].logprob == pytest.approx(gen.logprobs[0], abs=1e-4)
    assert all(s.logprob < scored[0].logprob and not s.is_greedy for s in scored[1:])


def test_text_context_requests_keep_their_cache_key() -> None:
    text = LoglikelihoodRequest("The cat", " sat")
    chat = LoglikelihoodRequest("", "True", messages=MESSAGES)
    assert text.key() == {"kind": "loglikelihood", "context": "The cat", "continuation": " sat"}
    assert chat.key()["messages"][1]["content"] == MESSAGES[1].content
    assert chat.key() != LoglikelihoodRequest("", "True", messages=MESSAGES[1:]).key()
    with pytest.raises(ValueError, match="not both"):
        LoglikelihoodRequest("text", "True", messages=MESSAGES)
