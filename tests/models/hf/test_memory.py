"""Budgets sized from device memory (arithmetic) and the out-of-memory back-off, on the real model.

CI has no GPU: the out-of-memory error is raised by a forward pre-hook on the real SmolLM2 whenever
a forward pass gets more input tokens than a simulated device holds, as CUDA raises it when a
batch does not fit; the back-off must then split or shrink batches until they fit, and give the
same records as a run that never ran out of memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import BackendError
from lingdiag.models.hf import Checkpoint, HFBackend, HFOptions
from lingdiag.models.hf.memory import MIN_TOKENS, SHARE, TokenCost, budget_tokens, small_device, token_cost


def test_an_8b_llama_costs_128_kib_of_cache_per_token() -> None:
    from transformers import LlamaConfig

    config = LlamaConfig(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=14336, vocab_size=128256)
    cost = token_cost(config, 2)
    assert cost == TokenCost(kv=2 * 32 * 8 * 128 * 2, activations=(4 * 4096 + 3 * 14336) * 2, logits=128256 * 6)
    assert cost.kv == 128 * 1024
    free = 60 * 2**30
    assert budget_tokens(free, cost, "loglik") == int(SHARE * free) // (cost.kv + cost.activations)
    assert budget_tokens(free, cost, "generate") < budget_tokens(free, cost, "loglik")
    assert budget_tokens(free, cost, "plain") < budget_tokens(free, cost, "loglik") // 3
    assert budget_tokens(2**20, cost, "loglik", reserve=2**30) == MIN_TOKENS


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "items.jsonl").read_text().splitlines()]


def _same(a: Any, b: Any, tolerance: float) -> bool:
    """``a == b``, floats within ``tolerance`` (relative to their size, at least 1)."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= tolerance * max(1.0, abs(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.slow
@pytest.mark.parametrize("prefix_reuse", [True, False])
def test_out_of_memory_back_off_gives_the_same_records(tmp_path: Path, prefix_reuse: bool) -> None:
    """Generation (a continuous-batching pool, restarted with smaller batches) gives byte-identical
    records; split log-likelihood batches (prefix tree or plain) pad their rows to other widths, which
    moves log-probs within float32 rounding (~1e-6 relative, as any other batch composition does) and
    leaves every decision as it was."""
    from lingdiag.models.embedded import ensure_converted

    backend = HFBackend(Checkpoint(str(ensure_converted("smollm2-135m")[0]), name="smollm2-135m"),
                        HFOptions(prefix_reuse=prefix_reuse))
    # A card holding 200 input tokens fits one ~170-token ImperfectiveNLI prompt, not a batch of them;
    # one of 64 fits an ExpliCa sentence pair, not a batch of them.
    configs = {"gen": (RunConfig(suite="imperfective", model="smollm2-135m", axes={"strategy": ["zero-shot"]},
                                 limit=8), 200),
               "loglik": (RunConfig(suite="explica", model="smollm2-135m", axes={"task": ["perplexity"]}, limit=6), 64)}
    for name, (config, room) in configs.items():
        evaluate(config, backend, tmp_path / name / "roomy")
        with small_device(backend.model, room) as refused:
            evaluate(config, backend, tmp_path / name / "tight")
        assert refused, f"{name}: no batch ran out of memory; the test would show nothing"
        roomy, tight = _records(tmp_path / name / "roomy"), _records(tmp_path / name / "tight")
        if name == "loglik":
            assert [(r["label"], r["correct"]) for r in tight] == [(r["label"], r["correct"]) for r in roomy]
            assert _same(tight, roomy, 1e-5)
        else:
            assert tight == roomy, name


@pytest.mark.slow
def test_a_single_request_too_large_is_a_one_line_error(smollm2: HFBackend) -> None:
    from lingdiag.records import LoglikelihoodRequest

    request = LoglikelihoodRequest("The cat sat on the mat and", " slept")
    smollm2.loglikelihood([request])  # the LM head's one-time check runs on a roomy device
    with small_device(smollm2.model, 3), pytest.raises(BackendError, match="one request does not fit") as e:
        smollm2.loglikelihood([request])
    assert "\n" not in str(e.value)
