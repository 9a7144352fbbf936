"""The transformers backend under each scoring policy, on the real embedded SmolLM2: the tokens a
policy puts before the text, the spans of per-token answers, and per-token sums equal to the
shared-prefix path's totals."""

from __future__ import annotations

import pytest

from lingdiag.models.hf import HFBackend
from lingdiag.models.hf.tokens import split_request, split_requests
from lingdiag.records import ChatMessage, LoglikelihoodRequest
from lingdiag.scoring import policy

pytestmark = pytest.mark.slow


def test_what_each_policy_puts_before_the_text(smollm2: HFBackend) -> None:
    lm = smollm2.loaded
    tok = lm.tokenizer
    bos = lm.prefix_id
    text = "The cat sat."
    plain = tok(text, add_special_tokens=False)["input_ids"]
    spaced = tok(" " + text, add_special_tokens=False)["input_ids"]
    assert split_request(lm, LoglikelihoodRequest("", text)).ctx == [bos]
    lm_eval = split_request(lm, LoglikelihoodRequest("", text, policy=policy("lm-eval"), per_token=True))
    assert (lm_eval.ctx, lm_eval.cont, lm_eval.spans[0]) == ([bos], spaced, (-1, 3))
    minicons = split_request(lm, LoglikelihoodRequest("", text, policy=policy("minicons")))
    assert (minicons.ctx, minicons.cont, minicons.scored) == ([], plain, len(plain) - 1)
    # A non-empty context: the default tokenizes it as before (no prefix); bos puts BOS first.
    context = tok("The cat", add_special_tokens=False)["input_ids"]
    assert split_request(lm, LoglikelihoodRequest("The cat", " sat")).ctx == tok("The cat")["input_ids"]
    assert split_request(lm, LoglikelihoodRequest("The cat", " sat", policy=policy("bos"))).ctx == [bos, *context]
    assert split_request(lm, LoglikelihoodRequest("The cat ", "sat", policy=policy("bos"), per_token=True)).spans \
        == ((-1, 3),)  # the context's trailing space moved to the continuation


@pytest.mark.parametrize("name", ["lingdiag", "bos", "lm-eval", "minicons", "bos+ws"])
def test_per_token_answers_sum_to_the_totals(smollm2: HFBackend, name: str) -> None:
    p = policy(name)
    requests = [LoglikelihoodRequest("", "Who have those men revealed they helped?", policy=p),
                LoglikelihoodRequest("Who have those men revealed", " they", policy=p),
                LoglikelihoodRequest("", "Hi", policy=p)]
    totals = smollm2.loglikelihood(requests)
    tokens = smollm2.loglikelihood([LoglikelihoodRequest(r.context, r.continuation, policy=p, per_token=True)
                                    for r in requests])
    for t, k in zip(totals, tokens, strict=True):
        assert k.token_logprobs is not None and k.token_spans is not None
        assert t.n_tokens == k.n_tokens == len(k.token_logprobs) == len(k.token_spans)
        assert t.logprob == pytest.approx(sum(k.token_logprobs), abs=1e-4)
        assert (k.word_start_logprobs is not None) == p.whitespace_correction
        if k.word_start_logprobs is not None:
            assert len(k.word_start_logprobs) == k.n_tokens + 1 and all(v <= 0 for v in k.word_start_logprobs)
    assert totals[2].n_tokens == (0 if name == "minicons" else 1)  # one token, nothing before it: unscored


def test_a_call_tokenized_together_equals_each_request_alone(smollm2: HFBackend) -> None:
    """``split_requests`` encodes a call's distinct texts once, in batches: the same tokens and spans
    as each request tokenized on its own, under every policy, for text and chat contexts."""
    lm = smollm2.loaded
    chat = (ChatMessage("user", "Is the cat asleep?"),)
    requests = [LoglikelihoodRequest(context, label, policy=policy(name), per_token=per_token)
                for name in ("lingdiag", "bos", "lm-eval", "minicons", "bos+ws")
                for context in ("", "The cat ", "Le chat était", "Кошка")
                for label in (" sat", "True", " мяукнула")
                for per_token in (False, True)]
    requests += [LoglikelihoodRequest("", label, messages=chat, per_token=True) for label in ("True", " False")]
    assert split_requests(lm, requests) == [split_request(lm, r) for r in requests]
