"""The work model of a scoring plan (``lingdiag.models.hf.workplan``) and the levers it chooses.

The model's FLOPs per position are an 8B Llama's parameters; its tiles are the tiles FlexAttention keeps;
its passes, tokens, padding and head positions are what the backend runs (on a tiny random Llama); the
scoring loop waits on the device no more often than it says; and every plan it can choose (padded
tree with length buckets, block-sparse packed passes at any cap, ``packing=auto``) gives the plain
padded path's log-probs within 1e-4 in float32.
"""

from __future__ import annotations

import traceback
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from helpers import smollm2_dir
from torch.utils._python_dispatch import TorchDispatchMode

import lingdiag
from lingdiag.models.hf import HFBackend, HFOptions, workplan
from lingdiag.models.hf.batching import Budget
from lingdiag.models.hf.placement import resolve
from lingdiag.models.hf.score import Scored
from lingdiag.records import LoglikelihoodRequest

EIGHT_B: dict[str, Any] = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                           "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 49152}


def test_the_flops_per_position_are_the_parameters_of_the_layers() -> None:
    """Two FLOPs per weight of the body's linear layers and of the LM head (a small Llama of the 8B's
    proportions: grouped heads, a gated MLP; the 8B itself takes half a minute to build, even on ``meta``)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=256, num_hidden_layers=3, num_attention_heads=8, num_key_value_heads=2,
                         intermediate_size=896, vocab_size=1000, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    body = sum(m.weight.numel() for m in model.model.layers.modules() if isinstance(m, torch.nn.Linear))
    shape = workplan.Shape.of(config)
    assert shape.body_flops == 2 * body and shape.head_flops == 2 * model.lm_head.weight.numel()
    assert shape.pair_flops == 4 * 3 * 8 * 32
    eight_b = workplan.Shape.of(_config())  # 6.98e9 body weights: 13.96 GFLOP a position
    assert eight_b.body_flops == 2 * 32 * (4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 14336)


def layout() -> tuple[list[tuple[int, int, list[tuple[int, int]]]], torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """A packed tail pass over a cache: a root of 150 slots, four level-1 segments, seven tails of 3-300 tokens.

    Returns ``workplan.tiles``' segments and ``attention.document_mask``'s tensors for the same pass.
    """
    root, level1, tails = 150, [40, 200, 7, 90], [(0, 3), (0, 300), (1, 12), (1, 129), (2, 1), (3, 64), (3, 128)]
    starts = [root + sum(level1[:k]) for k in range(len(level1))]
    cached = root + sum(level1)
    segments, offset = [], 0
    for parent, n in tails:
        segments.append((offset, offset + n, [(0, root), (starts[parent], starts[parent] + level1[parent]),
                                              (cached + offset, cached + offset + n)]))
        offset += n
    # Segment ids: 0 the root, 1-4 level 1, 5-11 the tails.
    key_segment = torch.tensor([0] * root + [1 + k for k, n in enumerate(level1) for _ in range(n)]
                               + [5 + k for k, (_, n) in enumerate(tails) for _ in range(n)])
    query_segment = key_segment[cached:]
    ancestors = torch.zeros(12, 12, dtype=torch.bool)
    ancestors[1:, 0] = True
    for k, (parent, _) in enumerate(tails):
        ancestors[5 + k, 1 + parent] = True
    return segments, query_segment, key_segment, ancestors, cached


def test_the_tiles_counted_are_the_tiles_flex_attention_keeps() -> None:
    """``workplan.tiles`` against the block mask FlexAttention builds for the same pass, and against the
    tiles of the dense mask counted one by one."""
    from lingdiag.models.hf.attention import document_mask

    segments, query_segment, key_segment, ancestors, cached = layout()
    block_mask = document_mask(query_segment, key_segment, ancestors, cached)
    kept = int(block_mask.kv_num_blocks.sum()) + int(block_mask.full_kv_num_blocks.sum())
    q = torch.arange(len(query_segment))[:, None]
    kv = torch.arange(len(key_segment))[None, :]
    own, key = query_segment[q], key_segment[kv]
    dense = ((own == key) & (kv <= q + cached)) | ancestors[own, key]
    b = workplan.BLOCK
    pad = (-dense.shape[0] % b, -dense.shape[1] % b)
    tiled = torch.nn.functional.pad(dense, (0, pad[1], 0, pad[0])).unflatten(0, (-1, b)).unflatten(2, (-1, b))
    assert workplan.tiles(segments) == kept == int(tiled.any(dim=(1, 3)).sum())


def scored(lengths: list[int], shared: int = 0) -> list[Scored]:
    """Requests of ``lengths`` tokens (distinct tokens, so nothing is shared beyond ``shared`` leading ones)."""
    out = []
    for k, n in enumerate(lengths):
        seq = list(range(shared)) + [1000 + 1000 * k + t for t in range(n - shared)]
        out.append(Scored(seq=seq, targets=seq[1:] + [0], first=max(shared - 1, 0)))
    return out


def test_the_choice_packs_only_where_it_saves_work() -> None:
    """Requests of one length pad nothing: the padded tree is chosen (a packed pass would compute whole tiles
    for 12-token requests). One long request among short ones pads every row to its length: packing is."""
    shape = workplan.Shape.of(_config())
    budget = Budget(tokens=1 << 20, max_batch=256, prefix_reuse=True, packed=1 << 20, choose_padded=True)
    even = workplan.choose(shape, scored([12] * 200), budget)
    assert even.kind == "tree" and even.budget.packed is None
    ragged = scored([12] * 200 + [2000])
    chosen = workplan.choose(shape, ragged, budget)
    assert chosen.kind == "packed-tree" and chosen.budget.packed is not None
    useful = workplan.useful_flops(shape, ragged)
    padded = workplan.tree(ragged, replace(budget, packed=None))
    assert chosen.flops(shape) < padded.flops(shape)
    assert chosen.figures(shape, useful)["planned_over_useful"] <= 1.15 < padded.figures(shape, useful)[
        "planned_over_useful"]
    # Under a dense mask the same pass pays for every query against every key (the H200's packing).
    dense = workplan.packed_plan(ragged, chosen.budget, share=True, attention="dense")
    assert dense.flops(shape) > chosen.flops(shape)


def _config() -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(tie_word_embeddings=False, **EIGHT_B)


def requests() -> list[LoglikelihoodRequest]:
    """Shared contexts (groups and tails), lone texts of several lengths, an empty context."""
    out = [LoglikelihoodRequest("The cat sat on the", x) for x in (" mat", " moon", " mat and slept soundly")]
    out += [LoglikelihoodRequest("", "Who have those men revealed they helped?"),
            LoglikelihoodRequest("A dog", " barked loudly at night."), LoglikelihoodRequest("", "Hi there"),
            LoglikelihoodRequest("Every teacher that the students admired", " wrote a long letter to the board.")]
    return out * 2 + [LoglikelihoodRequest("The cat sat on the", " rug")]


def tiny(vocab: int) -> Any:
    """A two-layer random Llama with SmolLM2's vocabulary, in float32."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, intermediate_size=128, vocab_size=vocab,
                                        tie_word_embeddings=False)).eval()


OURS = str(Path(lingdiag.__file__).parent)
SYNCS = {"aten._local_scalar_dense.default", "aten.nonzero.default", "aten.is_nonzero.default"}
"""Operators that make the host wait for a CUDA device (a value read back, a data-dependent shape)."""


class Waits(TorchDispatchMode):
    """Counts the operators of ``SYNCS``, and those called from lingdiag's own code."""

    def __init__(self) -> None:
        import transformers

        super().__init__()
        self.frames = (OURS, str(Path(transformers.__file__).parent))
        self.all = 0
        self.ours: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if str(func) in SYNCS:
            self.all += 1
            frames = [f for f in traceback.extract_stack() if f.filename.startswith(self.frames)]
            if frames and frames[-1].filename.startswith(OURS):
                self.ours[f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].name}"] += 1
        return func(*args, **(kwargs or {}))


def passes(backend: HFBackend, run: Any) -> tuple[Any, int, Waits]:
    """``run()``, the forward passes of the transformer body it made, and its waits on the device."""
    calls = []
    handle = backend.model.base_model.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        with Waits() as waits:
            out = run()
    finally:
        handle.remove()
    return out, len(calls), waits


@pytest.mark.slow
@pytest.mark.parametrize(("prefix_reuse", "packing"), [(True, False), (False, False), (True, True), (False, True)])
def test_the_plan_counts_what_the_backend_runs(prefix_reuse: bool, packing: bool) -> None:
    """Passes, tokens, padding and head positions as the backend counts them; waits on the device no more
    than the plan says, and none from lingdiag's own code inside the scoring loop of the tree or the packed
    passes (a nonzero per head chunk and a token count read back per pass before)."""
    from lingdiag.models.hf.score import scoring_view
    from lingdiag.models.hf.tokens import split_requests

    placement = resolve(batch_tokens=48)  # several passes of each kind
    backend = HFBackend.from_model(tiny(49152), str(smollm2_dir()), placement, name="tiny",
                                   options=HFOptions(prefix_reuse=prefix_reuse, packing=packing))
    backend.loglikelihood(requests()[:1])  # the head check, once per model
    before = backend.usage()
    _, n_passes, waits = passes(backend, lambda: backend.loglikelihood(requests()))
    usage = {k: v - before.get(k, 0) for k, v in backend.usage().items()}
    view = scoring_view(split_requests(backend.loaded, requests()))
    budget = Budget(48, placement.max_batch, prefix_reuse, call_tokens=placement.call_tokens,
                    packed=48 if packing else None)
    plan = (workplan.choose(workplan.Shape.of(backend.model.config), view, budget, padded=False,
                            attention=placement.packed_attention, pass_tokens=placement.call_tokens or 0)
            if packing else workplan.tree(view, budget) if prefix_reuse else workplan.plain(view, budget))
    figures = plan.figures(workplan.Shape.of(backend.model.config), 1)
    assert (n_passes, usage["forward_tokens"], usage["padded_tokens"], usage["head_positions"]) == (
        figures["passes"], figures["forward_tokens"], figures["padded_tokens"], figures["head_positions"])
    assert waits.all <= figures["syncs"]
    if prefix_reuse or packing:
        # Nothing of lingdiag's between the passes (the one copy of the totals after them, ``tolist``,
        # dispatches no operator on the CPU); the padded passes' waits are transformers' mask checks.
        assert waits.ours == Counter()
    if packing:
        assert usage[f"plan_{plan.kind}"] == 1 and usage["planned_flops"] == plan.flops(
            workplan.Shape.of(backend.model.config))


@pytest.mark.slow
def test_every_lever_gives_the_plain_padded_log_probs() -> None:
    """Block-sparse packed passes (the CUDA attention, here FlexAttention's eager reference) at small caps,
    with and without the tree; the padded tree bucketed by length; ``packing=auto``: the plain padded path's
    log-probs within 1e-4 in float32, the same greedy flags."""
    path = str(smollm2_dir())
    model = tiny(49152)
    reference = HFBackend.from_model(model, path, resolve(), name="tiny",
                                     options=HFOptions(prefix_reuse=False)).loglikelihood(requests())
    blocks = replace(resolve(batch_tokens=40), packed_attention="blocks")
    levers = {"blocks tree": (blocks, HFOptions(packing=True)),
              "blocks plain": (blocks, HFOptions(packing=True, prefix_reuse=False)),
              "bucketed tree": (replace(resolve(batch_tokens=64, max_batch=3), call_tokens=1), HFOptions()),
              "auto": (resolve(), HFOptions(packing="auto"))}
    for name, (placement, options) in levers.items():
        backend = HFBackend.from_model(model, path, placement, name="tiny", options=options)
        answers = backend.loglikelihood(requests())
        for a, b in zip(reference, answers, strict=True):
            assert (a.n_tokens, a.is_greedy) == (b.n_tokens, b.is_greedy), name
            assert b.logprob == pytest.approx(a.logprob, abs=1e-4), name
        assert model.config._attn_implementation == "sdpa"  # the block-sparse attention is put back after a pass
    assert HFBackend.from_model(model, path, resolve(), name="tiny",
                                options=HFOptions(packing="auto")).identity["packing"] == "auto"
