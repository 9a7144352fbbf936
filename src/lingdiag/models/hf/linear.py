"""The transformer body's linear layers on oneDNN, with weights packed once at load.

``torch.nn.functional.linear`` on a float32 CPU tensor goes to MKL, which re-reads the weight
in its plain layout on every call and, on AMD CPUs, runs its AVX2 kernels. oneDNN's matmul
on a weight reordered once into its blocked layout (what inductor's weight freezing does)
ran the body's products of SmolLM2-135M 1.18× faster here (``make bench``, ``levers``):
~225 GFLOP/s against MKL's ~200 on 2 cores of an AVX-512 EPYC, and the LM head 2× faster, at the same float32
precision (outputs equal within float32 rounding, ~1e-6).

In float32 a gated MLP (``down(act(gate(x)) * up(x))``, Llama's and Gemma's) runs as
``GatedMLP``: the activation is a post-op of the gate product and the product with ``up`` a
binary post-op of the up product, so no separate passes read and write the two wide
intermediate tensors again.

The same layer computes in bfloat16 for ``--dtype bfloat16-mixed``: weights packed in bf16,
each input rounded to bf16, float32 accumulation inside oneDNN, and the output returned in
float32 at once, so the residual stream, norms, attention and the LM head with its
log-softmax stay float32. On a CPU with native bf16 dot products (AVX512-BF16, AMX) that
product runs about twice as fast as float32's; without them it is several times slower.

Imported by ``LoadedModel.model`` when the model loads (torch is imported by then).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys

import torch

MADV_DONTNEED = 4
PRIMITIVE_CACHE = "16"
"""Entries of oneDNN's and ideep's primitive caches (default 1,024 each). A primitive is made
per layer shape and batch shape; log-likelihood batches come in hundreds of shapes, and with
the default caches a 4,800-request ExpliCa pass grew by ~150 MB of cached primitives. 16
holds one forward pass's shapes. Read once, at the process's first oneDNN call; a value the
user set is kept."""


def onednn_available(compute: torch.dtype = torch.float32) -> bool:
    """Whether this torch build, on this CPU, can run linear layers on oneDNN weights packed in ``compute``.

    oneDNN packs bfloat16 only on a CPU with bfloat16 instructions (AVX-512 BW/VL/DQ or AVX-NE-CONVERT);
    elsewhere (an AVX2 CPU) its reorder raises, so one tiny weight is packed here first, once per dtype.
    """
    if compute not in _PACKS:
        ops = torch.ops.mkldnn
        built = torch.backends.mkldnn.is_available()  # type: ignore[no-untyped-call]
        usable = bool(built) and hasattr(ops, "_reorder_linear_weight") and hasattr(ops, "_linear_pointwise")
        if usable:
            try:
                ops._reorder_linear_weight(torch.zeros(16, 16, dtype=compute, device="cpu"), None)
            except RuntimeError:  # "bf16 path needs the cpu support avx_ne_convert or avx512bw, ..."
                usable = False
        _PACKS[compute] = usable
    return _PACKS[compute]


_PACKS: dict[torch.dtype, bool] = {}


class PackedLinear(torch.nn.Module):
    """``y = x Wᵀ + b`` computed in ``compute`` dtype on a oneDNN-packed ``W``, returned in ``x``'s dtype."""

    def __init__(self, linear: torch.nn.Linear, compute: torch.dtype) -> None:
        """Pack ``linear``'s weight (cast to ``compute``); the bias keeps the layer's dtype."""
        super().__init__()
        self.compute = compute
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.packed = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach().to(compute), None)
        self.bias = None if linear.bias is None else linear.bias.detach()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The product on oneDNN; the bias is added in ``x``'s dtype."""
        y: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x.to(self.compute), self.packed, None, "none", [], "")
        y = y.to(x.dtype)
        return y if self.bias is None else y.add_(self.bias.to(x.dtype))


def file_mappings() -> list[tuple[int, int]]:
    """Address ranges of this process's file-backed private mappings (Linux; empty elsewhere)."""
    if not sys.platform.startswith("linux"):
        return []
    ranges = []
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5].startswith("/") and fields[1].endswith("p"):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((start, end))
    return ranges


def drop_pages(weight: torch.Tensor, mappings: list[tuple[int, int]]) -> None:
    """Let go of the resident pages of ``weight`` when it is a view of a mapped weights file.

    transformers maps a safetensors file and its parameters are views of it: once a layer is
    packed, the pages its old weight was read from would stay resident (and count in the
    process's memory) for as long as anything else of the file is in use, which the input
    embedding always is. Those pages were only read, so the kernel can drop them and would
    re-read them from the file if they were touched again (they are not: the layer no longer
    holds them). Pages shared with a neighbouring tensor are kept.
    """
    start, size = weight.data_ptr(), weight.numel() * weight.element_size()
    if not any(lo <= start and start + size <= hi for lo, hi in mappings):
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = (start + size) // mmap.PAGESIZE * mmap.PAGESIZE
    if last > first:
        ctypes.CDLL(None).madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), MADV_DONTNEED)


def packed_head(head: torch.nn.Linear) -> PackedLinear | None:
    """``head`` (a float32 LM head) as a ``PackedLinear``, or None where oneDNN is unavailable.

    The plain weight (the input embedding, in tied models) is read afterwards only row by
    row, for the tokens looked up: its mapped pages need not stay resident.
    """
    if head.weight.dtype != torch.float32 or not onednn_available():
        return None
    packed = PackedLinear(head, torch.float32)
    drop_pages(head.weight, file_mappings())
    return packed


PostOp = tuple[str, str]
"""A oneDNN eltwise post-op: its name and algorithm, as ``_linear_pointwise`` takes them."""


def _activation_post_ops() -> dict[type, PostOp]:
    """The activations of gated MLPs that oneDNN can apply as the gate product's post-op.

    transformers' ``SiLUActivation`` is ``F.silu`` (Llama, SmolLM2, Qwen, Mistral) and
    ``GELUTanh`` is ``F.gelu(approximate="tanh")`` (Gemma); oneDNN's ``swish`` and ``gelu``/``tanh``
    match them within float32 rounding (~5e-7 here).
    """
    from transformers import activations

    return {torch.nn.SiLU: ("swish", ""), activations.SiLUActivation: ("swish", ""),
            activations.GELUTanh: ("gelu", "tanh")}


class GatedMLP(torch.nn.Module):
    """``down(act(gate(x)) * up(x))`` as three oneDNN products on packed float32 weights.

    The activation is a post-op of the gate product and the multiplication a binary post-op of
    the up product, so the two [tokens × intermediate] tensors are not read and written again
    by separate ``silu`` and ``mul`` passes: SmolLM2's forward pass ran 1.03-1.10× faster here
    (bench/README.md, "Levers weighed"). The layers keep the names of transformers' MLPs.
    """

    def __init__(self, *layers: PackedLinear, post_op: PostOp) -> None:
        """``layers``: the gate, up and down projections, packed in float32."""
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = layers
        self.post_op = post_op

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The MLP's output; ``x`` is float32."""
        name, algorithm = self.post_op
        gate = torch.ops.mkldnn._linear_pointwise(x, self.gate_proj.packed, None, name, [], algorithm)
        hidden = torch.ops.mkldnn._linear_pointwise.binary(x, gate, self.up_proj.packed, None, "mul")
        out: torch.Tensor = self.down_proj(hidden)
        return out


Swap = tuple[torch.nn.Module, str, torch.nn.Module, torch.nn.Module]
"""A child module replaced in place: (parent, attribute, original, replacement)."""


def _gated_mlps(body: torch.nn.Module, packed: dict[torch.nn.Module, PackedLinear]) -> list[Swap]:
    """The float32 gated MLPs of ``body`` whose three layers are packed (``packed``: original →
    packed) and whose activation oneDNN applies, with their ``GatedMLP``s.
    """
    post_ops = _activation_post_ops()
    swaps: list[Swap] = []
    for parent in body.modules():
        for name, mlp in parent.named_children():
            post_op = post_ops.get(type(getattr(mlp, "act_fn", None)))
            found = [packed.get(getattr(mlp, n)) for n in ("gate_proj", "up_proj", "down_proj") if hasattr(mlp, n)]
            layers = [p for p in found if p is not None]
            if post_op and len(layers) == 3 and all(p.compute == torch.float32 and p.bias is None for p in layers):
                swaps.append((parent, name, mlp, GatedMLP(*layers, post_op=post_op)))
    return swaps


def pack_linears(model: torch.nn.Module, compute: torch.dtype, probe: list[int]) -> bool:
    """Replace the linear layers of ``model``'s transformer body by ``PackedLinear``s, in place,
    and in float32 its gated MLPs by ``GatedMLP``s.

    The LM head (outside ``model.base_model``) is left alone: it shares its weight with the
    input embedding in tied models, and logits rounded to bf16 would move log-probs by up
    to a tenth of a nat. A model whose code reads a layer's ``weight`` directly, or whose
    logits on ``probe`` (tokens of a plain sentence) move by more than float32 rounding (in
    bfloat16, by more than a logit: SmolLM2's move by ~0.4), keeps its original layers; one
    whose MLP is not the gated pattern ``GatedMLP`` computes keeps its MLPs unfused.

    Returns:
        Whether the layers were replaced.
    """
    if not onednn_available(compute):
        return False
    for variable in ("LRU_CACHE_CAPACITY", "ONEDNN_PRIMITIVE_CACHE_CAPACITY"):
        os.environ.setdefault(variable, PRIMITIVE_CACHE)
    body: torch.nn.Module = model.base_model  # type: ignore[assignment]
    ids = torch.tensor([probe], device=next(model.parameters()).device)  # packing runs on the CPU only
    tolerance = 1e-3 if compute == torch.float32 else 1.0
    mappings = file_mappings()
    with torch.inference_mode():
        before = model(input_ids=ids).logits.float()
        linears: list[Swap] = []
        for parent in body.modules():
            for name, child in parent.named_children():
                if isinstance(child, torch.nn.Linear):
                    # Each original's pages go as soon as it is packed, or both copies of the
                    # body's weights would be resident at the peak of loading.
                    linears.append((parent, name, child, PackedLinear(child, compute)))
                    drop_pages(child.weight, mappings)
        mlps = _gated_mlps(body, {old: new for _, _, old, new in linears})  # type: ignore[misc]
        for swaps in (linears + mlps, linears) if mlps else (linears,):
            for parent, name, _, new in swaps:
                setattr(parent, name, new)
            try:
                if (model(input_ids=ids).logits.float() - before).abs().max() <= tolerance:
                    return True
            except (AttributeError, RuntimeError):
                pass
            for parent, name, old, _ in reversed(swaps):
                setattr(parent, name, old)
    return False
