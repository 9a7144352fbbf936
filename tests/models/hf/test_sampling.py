"""The transformers backend samples: a request with ``sampling`` draws each token at its temperature,
within the backend's ``top_k`` and ``top_p``, from a generator seeded by the seed and its prompt — the
same seed gives the same tokens, whichever rows share the batch, on the dynamic cache, the static one
and fixed batches alike; ``top_k=1`` (or a tiny ``top_p``) is greedy again.

A randomly initialised tiny Llama built in memory (no weights loaded) with the embedded SmolLM2's
tokenizer runs through the real backend; its near-flat distributions make every draw count.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from helpers import smollm2_dir

from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.models.hf.placement import resolve
from lingdiag.models.providers import capabilities
from lingdiag.records import GenerationRequest, Sampling

SHARED = "You are a careful annotator. Read the premise and the hypothesis, then answer in one word. "


@cache
def _tiny() -> Any:
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                        max_position_embeddings=512, bos_token_id=tokenizer.bos_token_id,
                                        eos_token_id=tokenizer.eos_token_id)).eval()


def _backend(**options: Any) -> HFBackend:
    placement = resolve(device="cpu", dtype="float32", max_batch=256, packed_linears=False)
    return HFBackend.from_model(_tiny(), str(smollm2_dir()), placement, name="tiny", options=HFOptions(**options))


def _requests(sampling: Sampling | None, n: int = 6) -> list[GenerationRequest]:
    """Rows sharing a prompt start, ending at different steps (a stop string, caps of 4 and 8)."""
    return [GenerationRequest(prompt=SHARED + f"Item {i}: " + "word " * (i % 5), max_new_tokens=4 + 4 * (i % 2),
                              stop=("zz",), sampling=sampling) for i in range(n)]


def _tokens(backend: HFBackend, requests: list[GenerationRequest]) -> list[str]:
    """The answers (their log-probs differ in the last digit with the batch's shape, as greedy ones do)."""
    return [g.text for g in backend.generate(requests)]


def test_the_same_seed_draws_the_same_tokens_whatever_the_batch() -> None:
    backend = _backend()
    sampled = _requests(Sampling(0.9, seed=7))
    first = _tokens(backend, sampled)
    assert _tokens(backend, sampled[::-1]) == first[::-1]  # again, in another order
    assert _tokens(backend, sampled[:1]) == first[:1]  # alone, as in its batch
    assert _tokens(backend, _requests(Sampling(0.9, seed=8))) != first  # another seed draws otherwise
    assert _tokens(backend, _requests(None)) != first  # a sample, not the best token


@pytest.mark.parametrize("options", [{"kv_cache": "static"}, {"continuous_batching": False}, {"prefix_reuse": False}],
                         ids=["static", "fixed", "no-prefix"])
def test_every_decoding_path_draws_the_same_tokens(options: dict[str, Any]) -> None:
    sampled = _requests(Sampling(0.9, seed=7))
    assert _tokens(_backend(**options), sampled) == _tokens(_backend(), sampled)


def test_top_k_one_and_a_tiny_top_p_are_greedy_and_named_in_the_identity() -> None:
    greedy = _tokens(_backend(), _requests(None))
    for options in ({"top_k": 1}, {"top_p": 1e-9}):
        assert _tokens(_backend(**options), _requests(Sampling(1.5, seed=3))) == greedy
    assert "top_p" not in _backend().identity and "top_k" not in _backend().identity  # default keys unchanged
    identity = _backend(top_p=0.5, top_k=5).identity
    assert (identity["top_p"], identity["top_k"]) == ("0.5", "5")


def test_every_local_provider_declares_sampling_without_loading() -> None:
    for spec in ("smollm2-135m", f"hf:{smollm2_dir()}"):
        declared = capabilities(spec, {})
        assert declared.sampling and declared.thinking and declared.loglikelihood


@pytest.mark.parametrize("value", [{"top_p": 0}, {"top_p": 1.5}, {"top_k": -1}])
def test_a_bad_top_p_or_top_k_is_refused_before_loading(value: dict[str, Any]) -> None:
    from lingdiag.errors import ConfigError

    with pytest.raises(ConfigError, match=next(iter(value))):
        capabilities("smollm2-135m", value)
