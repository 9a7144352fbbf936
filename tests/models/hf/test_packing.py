"""Packed scoring (``Scorer.packed``): log-likelihoods from passes with no padding, each level of the
prefix tree one row under a document mask, equal the padded passes' in float32, under every scoring
policy, for text and chat contexts, with the prefix tree on and off; on a tiny random model (fast) and
on the real embedded SmolLM2 (slow)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import smollm2_dir

from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.models.hf.placement import resolve
from lingdiag.records import ChatMessage, LoglikelihoodRequest
from lingdiag.scoring import policy, policy_names

CHAT = (ChatMessage("system", "Answer True, False or Unknown."),
        ChatMessage("user", "Premise: Ann was baking a cake. Hypothesis: Ann baked a cake."))


def requests() -> list[LoglikelihoodRequest]:
    """Shared contexts (the tree's groups and tails), lone texts and chat contexts, under every policy."""
    out: list[LoglikelihoodRequest] = []
    for name in policy_names():
        p = policy(name)
        out += [LoglikelihoodRequest("The cat sat on the", x, policy=p)
                for x in (" mat", " moon", " mat and slept soundly")]
        out += [LoglikelihoodRequest("", "Who have those men revealed they helped?", policy=p),
                LoglikelihoodRequest("A dog", " barked loudly at night.", policy=p),
                LoglikelihoodRequest("", "Hi there", policy=p)]
        out += [LoglikelihoodRequest("", x, messages=CHAT, policy=p) for x in ("True", "False", "Unknown")]
    return out


def tiny(vocab: int) -> Any:
    """A two-layer random Llama with SmolLM2's vocabulary."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, intermediate_size=128, vocab_size=vocab,
                                        tie_word_embeddings=False)).eval()


def assert_equal(padded: list[Any], packed: list[Any]) -> None:
    assert len(padded) == len(packed)
    for a, b in zip(padded, packed, strict=True):
        assert (a.n_tokens, a.is_greedy, a.error) == (b.n_tokens, b.is_greedy, b.error)
        # Float32 sums over other matrix shapes: within 1e-5 relative, or 1e-4 nat on a short text (seen:
        # 1.9e-5 on SmolLM2's -1.65); the padded tree and plain paths are held to the same 1e-4.
        assert b.logprob == pytest.approx(a.logprob, rel=1e-5, abs=1e-4)


# Slow: the SmolLM2 tokenizer's directory comes from converting the embedded model (weights).
@pytest.mark.slow
@pytest.mark.parametrize("prefix_reuse", [True, False])
def test_packed_equals_padded_on_a_tiny_model(prefix_reuse: bool) -> None:
    path = str(smollm2_dir())
    model = tiny(49152)
    backends = [HFBackend.from_model(model, path, resolve(), name="tiny",
                                     options=HFOptions(prefix_reuse=prefix_reuse, packing=p))
                for p in (False, True)]
    padded, packed = (b.loglikelihood(requests()) for b in backends)
    assert_equal(padded, packed)
    usage = [b.usage() for b in backends]
    assert usage[1]["padded_tokens"] == usage[1]["forward_tokens"]  # no padding at all
    assert usage[0]["padded_tokens"] > usage[0]["forward_tokens"]


@pytest.mark.slow
def test_packed_passes_are_filled_to_the_budget() -> None:
    """A budget smaller than the call splits it into several packed passes: the same answers."""
    path = str(smollm2_dir())
    model = tiny(49152)
    whole = HFBackend.from_model(model, path, resolve(), name="tiny", options=HFOptions(packing=True))
    small = HFBackend.from_model(model, path, resolve(batch_tokens=24), name="tiny",
                                   options=HFOptions(packing=True))
    assert_equal(whole.loglikelihood(requests()), small.loglikelihood(requests()))
    assert small.identity["packing"] == "on" and "packing" not in HFBackend(path).identity


@pytest.mark.slow
@pytest.mark.parametrize("prefix_reuse", [True, False])
def test_packed_equals_padded_on_smollm2(prefix_reuse: bool) -> None:
    path = str(smollm2_dir())
    padded, packed = (HFBackend(path, HFOptions(prefix_reuse=prefix_reuse, packing=p), resolve())
                      .loglikelihood(requests()) for p in (False, True))
    assert_equal(padded, packed)


def test_packing_is_asked_for_on_every_device() -> None:
    """Not on by default with CUDA: packed to a card's memory, a pass's dense mask made attention 63% of
    the kernel time on an H200 (bench/README.md). A placement that says CUDA is enough to check: the
    backend decides packing, and names it in its identity, before any weight is loaded."""
    from dataclasses import replace

    path = str(smollm2_dir())
    card = replace(resolve(), kind="cuda")
    assert "packing" not in HFBackend(path, HFOptions(), card).identity
    assert HFBackend(path, HFOptions(packing=True), card).identity["packing"] == "on"
