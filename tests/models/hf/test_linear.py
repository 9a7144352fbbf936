"""Linear layers on oneDNN-packed weights (the default) and bf16 products (``--dtype bfloat16-mixed``),
against torch's own float32 layers on the embedded SmolLM2."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.records import LoglikelihoodRequest


@cache
def _backend(path: str, packed: bool, dtype: str = "float32") -> HFBackend:
    return HFBackend(path, HFOptions(packed_linears=packed, dtype=dtype))  # type: ignore[arg-type]


def _explica_requests(n: int) -> list[LoglikelihoodRequest]:
    from lingdiag.suites.explica.data import builtin_items
    from lingdiag.suites.explica.tasks import PerplexityTask

    return [r for it in builtin_items()[:n] for r in PerplexityTask().render(it)]  # type: ignore[misc]


def _decisions(answers: list) -> list[int]:  # type: ignore[type-arg]
    return [max(range(4), key=lambda j: answers[k + j].logprob / answers[k + j].n_tokens)
            for k in range(0, len(answers), 4)]


def _layers(model: object) -> dict[str, int]:
    import torch

    from lingdiag.models.hf.linear import GatedMLP, PackedLinear

    body = model.base_model  # type: ignore[attr-defined]
    return {"packed": sum(isinstance(m, PackedLinear) for m in body.modules()),
            "plain": sum(isinstance(m, torch.nn.Linear) for m in body.modules()),
            "gated": sum(isinstance(m, GatedMLP) for m in body.modules())}


@pytest.mark.slow
def test_packed_float32_equals_torch_layers(smollm2: HFBackend) -> None:
    unpacked = _backend(smollm2.identity["path"], packed=False)
    # The default backend really runs on packed layers, the other on torch's own.
    assert _layers(smollm2.model) == {"packed": 30 * 7, "plain": 0, "gated": 30}
    assert _layers(unpacked.model) == {"packed": 0, "plain": 30 * 7, "gated": 0}
    requests = _explica_requests(10)
    fast, ref = smollm2.loglikelihood(requests), unpacked.loglikelihood(requests)
    # Two float32 kernels round differently. On SmolLM2 a sentence's float32 log-prob already moves
    # by up to ~1e-3 nat with the batch it is scored in (against a float64 forward pass, on either
    # kernel: bench/float64_reference.py), so that is the tolerance; decisions must not move.
    assert max(abs(a.logprob - b.logprob) for a, b in zip(fast, ref, strict=True)) < 2e-3
    assert _decisions(fast) == _decisions(ref)
    assert [a.is_greedy for a in fast] == [b.is_greedy for b in ref]

    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

    gen = [strategy("dap", max_new_tokens=8).render(it)[0] for it in builtin_items()[::40][:6]]
    assert [g.text for g in smollm2.generate(gen)] == [g.text for g in unpacked.generate(gen)]


@pytest.mark.slow
def test_bfloat16_mixed_keeps_the_residual_stream_and_head_in_float32(smollm2: HFBackend) -> None:
    import torch

    from lingdiag.errors import BackendError
    from lingdiag.models.hf.linear import PackedLinear, onednn_available

    mixed = _backend(smollm2.identity["path"], packed=True, dtype="bfloat16-mixed")
    assert mixed.name.endswith("-bfloat16-mixed") and mixed.identity["dtype"] == "bfloat16-mixed"
    if not onednn_available(torch.bfloat16):  # a CPU without bfloat16 instructions (AVX2): one line, no traceback
        with pytest.raises(BackendError, match="bfloat16-mixed needs oneDNN linear layers in bfloat16") as refused:
            _ = mixed.model
        assert "\n" not in str(refused.value)
        return
    model = mixed.model
    layers = [m for m in model.base_model.modules() if isinstance(m, PackedLinear)]
    assert len(layers) == 30 * 7 and all(m.compute == torch.bfloat16 for m in layers)
    assert _layers(model)["gated"] == 0  # the fused MLP is float32's only
    assert model.get_output_embeddings().weight.dtype == torch.float32
    assert model.base_model.norm.weight.dtype == torch.float32
    requests = _explica_requests(10)
    ours, ref = mixed.loglikelihood(requests), smollm2.loglikelihood(requests)
    diff = max(abs(a.logprob - b.logprob) for a, b in zip(ours, ref, strict=True))
    # bf16 products move log-probs (that is their price), but by rounding, not by a broken model.
    assert 1e-4 < diff < 1.5
    assert sum(a == b for a, b in zip(_decisions(ours), _decisions(ref), strict=True)) >= 8


def _tiny(kind: str) -> object:
    """A randomly initialised two-layer model of a real architecture (transformers' own code)."""
    import torch
    import transformers

    torch.manual_seed(0)
    sizes: dict[str, Any] = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256}
    if kind == "gemma3":
        return transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(**sizes)).eval()
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**sizes)).eval()


@pytest.mark.parametrize("kind, post_op", [("llama", ("swish", "")), ("gemma3", ("gelu", "tanh"))])
def test_gated_mlps_fuse_their_activation_and_product(kind: str, post_op: tuple[str, str]) -> None:
    import torch

    from lingdiag.models.hf.linear import GatedMLP, pack_linears

    model = _tiny(kind)
    ids = torch.tensor([[3, 17, 99, 4, 250, 8]])
    with torch.inference_mode():
        before = model(input_ids=ids).logits  # type: ignore[operator]
        assert pack_linears(model, torch.float32, [5, 6, 7])  # type: ignore[arg-type]
        after = model(input_ids=ids).logits  # type: ignore[operator]
    assert _layers(model)["gated"] == 2 and _layers(model)["plain"] == 0
    assert {m.post_op for m in model.modules() if isinstance(m, GatedMLP)} == {post_op}  # type: ignore[attr-defined]
    assert (after - before).abs().max() < 1e-4


def test_an_mlp_computing_otherwise_stays_unfused() -> None:
    import torch
    from transformers.models.llama.modeling_llama import LlamaMLP

    from lingdiag.models.hf.linear import pack_linears

    class UpActivated(LlamaMLP):
        """gate and up in each other's roles: the names of a gated MLP, not its formula."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.down_proj(self.act_fn(self.up_proj(x)) * self.gate_proj(x))

    model = _tiny("llama")
    for layer in model.model.layers:  # type: ignore[attr-defined]
        layer.mlp.__class__ = UpActivated
    ids = torch.tensor([[3, 17, 99, 4, 250, 8]])
    with torch.inference_mode():
        before = model(input_ids=ids).logits  # type: ignore[operator]
        # The probe catches the fused formula's different logits; the layers stay packed.
        assert pack_linears(model, torch.float32, [5, 6, 7, 8, 9])  # type: ignore[arg-type]
        after = model(input_ids=ids).logits  # type: ignore[operator]
    assert _layers(model) == {"packed": 2 * 7, "plain": 0, "gated": 0}
    assert (after - before).abs().max() < 1e-4


def test_drop_pages_keeps_a_mapped_tensor_readable(tmp_path: Path) -> None:
    import torch

    from lingdiag.models.hf.linear import drop_pages, file_mappings

    values = torch.arange(300_000, dtype=torch.float32)
    path = tmp_path / "weights.bin"
    path.write_bytes(values.numpy().tobytes())
    mapped = torch.from_file(str(path), shared=False, size=values.numel(), dtype=torch.float32)
    assert float(mapped.sum()) == float(values.sum())  # resident now
    assert any(lo <= mapped.data_ptr() < hi for lo, hi in file_mappings())
    drop_pages(mapped, file_mappings())
    assert torch.equal(mapped, values)  # re-read from the file
    anonymous = values.clone()
    drop_pages(anonymous, file_mappings())  # not in a file mapping: left alone
    assert torch.equal(anonymous, values)
