"""``kv_cache=static``: decoding in fixed rows × slots written in place (``kv.SlotCache``) gives the
tokens of the dynamic cache, token for token, on every decoding path: greedy answers whose rows end at
different steps, a shared prompt, rows refilled from the queue, fixed batches, a constraint, budget
forcing; and a sliding-window model is refused in one line.

The fast tests run a randomly initialised tiny Llama built in memory (no weights are loaded) with the
embedded SmolLM2's tokenizer, through the real backend; the slow one runs SmolLM2 itself.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import QWEN3_LIKE_TEMPLATE, smollm2_dir, smollm2_with_template

from lingdiag.errors import BackendError
from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.models.hf.placement import resolve
from lingdiag.records import ChatMessage, Constraint, Generation, GenerationRequest
from lingdiag.thinking import Thinking

SHARED = "You are a careful annotator. Read the premise and the hypothesis, then answer in one word. "
"""A prompt start every request of a group shares (over ``MIN_SHARED_PROMPT`` tokens)."""


@cache
def _tiny(kind: str = "llama") -> Any:
    """A random tiny causal LM with SmolLM2's vocabulary (``mistral``: one with a sliding window)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    torch.manual_seed(0)
    shape = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                 bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    if kind == "mistral":
        return MistralForCausalLM(MistralConfig(**shape, sliding_window=64)).eval()
    return LlamaForCausalLM(LlamaConfig(**shape)).eval()


def _backend(kv_cache: str, *, tokenizer: Path | None = None, kind: str = "llama", batch_tokens: int | None = None,
             **options: Any) -> HFBackend:
    placement = resolve(device="cpu", dtype="float32", threads=None, batch_tokens=batch_tokens, max_batch=256,
                        packed_linears=False, max_memory=None)
    return HFBackend.from_model(_tiny(kind), str(tokenizer or smollm2_dir()), placement, name="tiny",
                                options=HFOptions(kv_cache=kv_cache, **options))  # type: ignore[arg-type]


def _requests() -> list[GenerationRequest]:
    """Rows that end at different steps: a stop string hit after 2 to 6 tokens, caps of 9 and 24."""
    out = [GenerationRequest(prompt=SHARED + f"Item {i}: " + "word " * (i % 7), max_new_tokens=24, stop=("s",))
           for i in range(12)]
    out += [GenerationRequest(prompt=SHARED + f"Case {i}.", max_new_tokens=9) for i in range(5)]
    return out + [GenerationRequest(prompt=f"Unshared {i} " + "x" * (3 * i), max_new_tokens=24) for i in range(4)]


def _assert_same(static: list[Generation], dynamic: list[Generation]) -> None:
    assert [g.text for g in static] == [g.text for g in dynamic]
    assert [g.n_tokens for g in static] == [g.n_tokens for g in dynamic]
    # Float sums over more (masked) slots: equal within float32 rounding, not to the last bit.
    assert max(abs(x - y) for a, b in zip(static, dynamic, strict=True)
               for x, y in zip(a.logprobs or (), b.logprobs or (), strict=True)) < 1e-4


@pytest.mark.parametrize("options", [
    {},  # one pool, a shared prompt
    {"batch_tokens": 200},  # a few rows at a time: finished rows' places refilled from the queue
    {"prefix_reuse": False},
    {"batch_tokens": 200, "prefix_reuse": False},
    {"batch_tokens": 200, "continuous_batching": False},  # fixed batches, no refill
])
def test_static_decoding_gives_the_dynamic_caches_tokens(options: dict[str, Any]) -> None:
    requests = _requests()
    static, dynamic = _backend("static", **options), _backend("dynamic", **options)
    ours, ref = static.generate(requests), dynamic.generate(requests)
    _assert_same(ours, ref)
    assert len({g.n_tokens for g in ref}) >= 4  # rows really ended at different steps
    refilled = options.get("batch_tokens") and options.get("continuous_batching", True)
    assert (static.usage()["refilled_rows"] > 0) == bool(refilled)
    # Fixed shapes: every step runs every row of its batch, finished or not.
    assert static.usage()["forward_tokens"] == dynamic.usage()["forward_tokens"]


@pytest.mark.parametrize("requests", [
    [GenerationRequest(prompt=SHARED + f"x{i}", max_new_tokens=1) for i in range(5)],  # every row ends at its prefill
    [GenerationRequest(prompt=SHARED * 3 + f"x{i}", max_new_tokens=20) for i in range(3)],  # a row over the budget
    [GenerationRequest(prompt=SHARED + "same", max_new_tokens=8)] * 6,  # duplicates
    [GenerationRequest(prompt=c, max_new_tokens=6) for c in "abc"],  # one-token prompts, nothing shared
], ids=["max-new-1", "over-budget", "duplicates", "one-token"])
def test_static_decoding_at_the_edges(requests: list[GenerationRequest]) -> None:
    static, dynamic = _backend("static", batch_tokens=60), _backend("dynamic", batch_tokens=60)
    _assert_same(static.generate(requests), dynamic.generate(requests))


def test_static_decoding_under_a_constraint_and_sampling_gives_the_same_answers() -> None:
    pytest.importorskip("xgrammar")
    greedy = Constraint(kind="choice", choices=("True", "False", "Unknown"))
    sampled = Constraint(kind="choice", choices=("True", "False", "Unknown"), sample_seed=7)
    requests = [GenerationRequest(prompt=SHARED + f"Question {i}?", max_new_tokens=6, constraint=c)
                for c in (greedy, sampled) for i in range(6)]
    ours, ref = _backend("static").generate(requests), _backend("dynamic").generate(requests)
    _assert_same(ours, ref)
    assert {g.text for g in ours} <= {"True", "False", "Unknown"}


def test_static_decoding_with_budget_forcing_gives_the_same_traces(tmp_path_factory: pytest.TempPathFactory) -> None:
    template = smollm2_with_template(tmp_path_factory, QWEN3_LIKE_TEMPLATE)
    requests = [GenerationRequest(messages=(ChatMessage("user", f"{SHARED}Item {i}: Ann was baking."),),
                                  max_new_tokens=5, thinking=Thinking.parse(setting))
                for i in range(3) for setting in ("budget:7", "on:6", "off")]
    ours = _backend("static", tokenizer=template).generate(requests)
    ref = _backend("dynamic", tokenizer=template).generate(requests)
    _assert_same(ours, ref)
    assert [(g.reasoning, g.reasoning_tokens, g.unfinished) for g in ours] == \
        [(g.reasoning, g.reasoning_tokens, g.unfinished) for g in ref]
    assert any(g.reasoning_tokens == 7 for g in ours) and any(g.unfinished for g in ours)


def test_static_is_named_in_the_identity_and_refused_for_a_sliding_window() -> None:
    assert _backend("static").identity["kv_cache"] == "static"
    assert "kv_cache" not in _backend("dynamic").identity  # identities written before it stay as they were
    with pytest.raises(BackendError, match=r"^kv_cache=static: .*sliding-window attention \(64 tokens\)"):
        _backend("static", kind="mistral").generate(_requests()[:2])


@pytest.mark.slow
def test_smollm2_static_decoding_equals_dynamic_with_refills(smollm2: HFBackend) -> None:
    # Short (DAP) and long (CoT) answers of the real model under a budget of a few rows.
    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

    items = builtin_items()[::40][:4]
    requests = [strategy(name, max_new_tokens=24).render(it)[0] for it in items for name in ("dap", "cot")]
    path = smollm2.identity["path"]
    static = HFBackend(path, HFOptions(batch_tokens=1500, kv_cache="static"))
    dynamic = HFBackend(path, HFOptions(batch_tokens=1500))
    ours, ref = static.generate(requests), dynamic.generate(requests)
    _assert_same(ours, ref)
    assert static.usage()["refilled_rows"] > 0
    assert len({g.n_tokens for g in ref}) >= 2


def test_static_slots_past_the_context_are_refused_in_one_line_before_any_allocation() -> None:
    """Issue 57: ``max_new_tokens=1000000`` allocated a million slots per row (~46 GB on SmolLM2)."""
    backend = _backend("static")
    prompt = SHARED + "word " * 450  # a long prompt: the edge below decodes a few tokens only
    n = len(backend.tokenizer(prompt)["input_ids"])
    for max_new in (1_000_000, 512 - n + 1):
        with pytest.raises(BackendError) as e:
            backend.generate([GenerationRequest(prompt=prompt, max_new_tokens=max_new)])
        message = str(e.value)
        assert "\n" not in message and message.startswith(f"kv_cache=static: a row needs {n + max_new:,} slots")
        assert f"past the model's context of 512 tokens; lower max_new_tokens to at most {512 - n}" in message
    assert backend.usage().get("forward_tokens", 0) == 0  # refused before the first step
    at_the_edge = backend.generate([GenerationRequest(prompt=prompt, max_new_tokens=512 - n)])
    assert at_the_edge[0].n_tokens <= 512 - n
