"""The work model of a batch plan: what the device computes for one call, counted before it runs.

A plan is the list of forward passes a call makes (``Pass``): its rows, the query positions of each
row (padding included), the key positions each query may read (the cache below it and the row
itself), the positions the LM head computes, and the query-key pairs the attention kernel computes.
``Shape`` turns a plan into FLOPs: matrix FLOPs of the body's linear layers per padded position and of
the LM head per head position, and attention FLOPs per computed query-key pair.

The attention pairs are the kernel's, not the mask's:

- a padded row under a padding mask (``dense``) computes every query against every key of the row,
  masked and padded ones included (a masked SDPA kernel has no causal skip);
- a packed row under a block-sparse document mask (``blocks``, FlexAttention's ``create_block_mask``)
  computes every ``BLOCK`` × ``BLOCK`` tile that holds at least one allowed pair, and skips the rest;
- a packed row under a dense 4D mask computes the whole ``tokens × keys`` rectangle.

``useful`` is the work no plan can avoid: each request's own tokens through the body, the LM head at
its scored positions, and its own causal attention (``n (n + 1) / 2`` pairs). A shared-prefix tree can
do less than that (a prompt shared by four continuations runs once), a padded or dense plan more.

The plans mirror ``score.Scorer``'s paths, built from the same ``batching`` functions; the backend's
``usage`` counters (forward, padded and head positions) equal a plan's, which a test checks. Pure
Python: ``bench/gpu.py --plan-only`` counts a study's work at an 8B shape with neither torch weights
nor a card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Any, Protocol

from lingdiag.models.hf.batching import (
    Budget,
    Group,
    common_prefix_all,
    fill_packs,
    length_chunks,
    pack_groups,
    plan_groups,
    token_budget_batches,
)
from lingdiag.models.hf.placement import PackedAttention

BLOCK = 128
"""FlexAttention's default tile (``create_block_mask``'s ``BLOCK_SIZE``): a tile with one allowed
query-key pair is computed whole."""


MASK_CHECK_SYNCS = 2
"""Host waits of a padded pass with nothing cached below it: transformers reads the padding mask back
(twice at most) to decide whether SDPA may skip it for ``is_causal``. A pass on a cache, and a packed pass
(its 4D mask is used as given), reads nothing back; nor does lingdiag's scoring between passes."""
PLAIN_SYNCS_PER_ROW = 2
"""Host waits per row of the plain path: its summed log-prob and its greedy flag are read back row by row."""
DECODE_SYNCS_PER_STEP = 1
"""Host waits per decoding step: the picked tokens come back to check stops and end answers."""


@dataclass(frozen=True, slots=True)
class Shape:
    """The sizes of a decoder-only transformer that decide its work per token."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int

    @classmethod
    def of(cls, config: Any) -> Shape:
        """The shape of a transformers config (its text config for a multimodal one)."""
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        heads = int(text.num_attention_heads)
        hidden = int(text.hidden_size)
        return cls(hidden=hidden, layers=int(text.num_hidden_layers), heads=heads,
                   kv_heads=int(getattr(text, "num_key_value_heads", None) or heads),
                   head_dim=int(getattr(text, "head_dim", None) or hidden // heads),
                   intermediate=int(getattr(text, "intermediate_size", None) or 4 * hidden),
                   vocab=int(text.vocab_size))

    @property
    def body_flops(self) -> int:
        """Matrix FLOPs of one position through every layer's projections and gated MLP."""
        q = self.heads * self.head_dim
        kv = self.kv_heads * self.head_dim
        per_layer = self.hidden * (2 * q + 2 * kv) + 3 * self.hidden * self.intermediate
        return 2 * self.layers * per_layer

    @property
    def head_flops(self) -> int:
        """Matrix FLOPs of the LM head at one position."""
        return 2 * self.hidden * self.vocab

    @property
    def pair_flops(self) -> int:
        """Attention FLOPs of one query-key pair in every layer (scores and the weighted values)."""
        return 4 * self.layers * self.heads * self.head_dim

    @property
    def weights(self) -> int:
        """Parameters read by every pass: the body's matrices and the LM head (embeddings are gathered)."""
        return (self.body_flops + self.head_flops) // 2


@dataclass(frozen=True, slots=True)
class Pass:
    """One forward pass of a plan."""

    rows: int
    """Batch rows (1 for a packed pass)."""
    width: int
    """Query positions per row, padding included."""
    tokens: int
    """Real tokens among ``rows × width``."""
    head: int
    """Positions the LM head computes logits for."""
    pairs: int
    """Query-key pairs the attention kernel computes, masked ones included."""
    syncs: int = 0
    """Times the host waits on the device during the pass (a value read back, a data-dependent shape)."""

    @property
    def padded(self) -> int:
        """Positions the body computes: ``rows × width``."""
        return self.rows * self.width


@dataclass(frozen=True, slots=True)
class Plan:
    """A call's passes under one way of running it, and the work they cost."""

    kind: str
    """``tree``, ``plain``, ``packed``, ``packed-tree`` or ``generate``, with ``/dense`` for a packed
    pass under a dense mask."""
    passes: tuple[Pass, ...]
    budget: Budget
    """What the plan was made for, and what ``Scorer`` runs it with: ``packed``, the tokens per packed
    pass (None: padded); ``call_tokens``, the padded tails' passes (``batching.length_chunks``)."""

    def flops(self, shape: Shape) -> int:
        """Every FLOP the device computes for this plan: body, LM head and attention."""
        return sum(p.padded * shape.body_flops + p.head * shape.head_flops + p.pairs * shape.pair_flops
                   for p in self.passes)

    def figures(self, shape: Shape, useful: int) -> dict[str, Any]:
        """The plan's work in figures (for ``bench/gpu.py --plan-only`` and the record of a choice)."""
        planned = self.flops(shape)
        tokens = sum(p.tokens for p in self.passes)
        padded = sum(p.padded for p in self.passes)
        attention = sum(p.pairs for p in self.passes) * shape.pair_flops
        return {"plan": self.kind, "pass_tokens": self.budget.packed or self.budget.tokens,
                "call_tokens": self.budget.call_tokens, "passes": len(self.passes),
                "forward_tokens": tokens, "padded_tokens": padded,
                "padding_share": round(1 - tokens / padded, 4) if padded else 0.0,
                "head_positions": sum(p.head for p in self.passes),
                "planned_flops": planned, "useful_flops": useful,
                "planned_over_useful": round(planned / useful, 4) if useful else None,
                "attention_share": round(attention / planned, 4) if planned else 0.0,
                "syncs": sum(p.syncs for p in self.passes),
                "syncs_per_pass": round(sum(p.syncs for p in self.passes) / len(self.passes), 3)
                if self.passes else 0.0}


class Request(Protocol):
    """What the model needs of one log-likelihood request (``score.Scored`` is one)."""

    @property
    def seq(self) -> Sequence[int]:
        """Model input: context and continuation without the last token."""

    @property
    def first(self) -> int:
        """First position whose logits are scored (the continuation starts at ``first + 1``)."""


def useful_flops(shape: Shape, requests: Sequence[Request]) -> int:
    """Each request's own tokens through the body, the LM head at its scored positions, its own causal attention."""
    return sum(len(r.seq) * shape.body_flops + (len(r.seq) - r.first) * shape.head_flops
               + len(r.seq) * (len(r.seq) + 1) // 2 * shape.pair_flops for r in requests)


def useful_generation_flops(shape: Shape, prompts: Sequence[int], new_tokens: int) -> int:
    """Each trace's prompt and ``new_tokens`` through the body and its own causal attention, logits per new token."""
    out = 0
    for n in prompts:
        total = n + new_tokens - 1  # the last token is picked, never run through the model
        out += total * shape.body_flops + new_tokens * shape.head_flops + total * (total + 1) // 2 * shape.pair_flops
    return out


def _span_positions(spans: Sequence[tuple[int, int]]) -> int:
    """Distinct positions of one row that scored spans ``[start, end)`` cover (the head computes each once)."""
    covered = 0
    reach = None
    for start, end in sorted(spans):
        if end <= start:
            continue
        if reach is None or start >= reach:
            covered += end - start
            reach = end
        elif end > reach:
            covered += end - reach
            reach = end
    return covered


def shared(requests: Sequence[Request], budget: Budget) -> tuple[int, list[Group]]:
    """The call-wide root and the groups of the prefix tree (``batching.plan_groups``), as ``Scorer`` finds them."""
    seqs = [list(r.seq) for r in requests]
    root = common_prefix_all(seqs)
    return root, plan_groups(seqs, root, budget.max_batch)


def tree(requests: Sequence[Request], budget: Budget, tree_groups: tuple[int, list[Group]] | None = None) -> Plan:
    """``Scorer.tree``'s passes: the root once, one left-padded row per group, tails in length chunks
    (``tree_groups``: ``shared``'s answer, when computed already).
    """
    seqs = [list(r.seq) for r in requests]
    root, groups = tree_groups or shared(requests, budget)
    passes: list[Pass] = []
    if root:
        head = _span_positions([(r.first, root) for r in requests])
        passes.append(Pass(rows=1, width=root, tokens=root, head=head, pairs=root * root, syncs=MASK_CHECK_SYNCS))
    for batch in pack_groups(groups, seqs, root, budget):
        grouped = [g for g in batch if g.end > root]
        if not grouped:
            continue
        width = max(g.end - root for g in grouped)
        head = sum(_span_positions([(max(root, requests[i].first), g.end) for i in g.members]) for g in grouped)
        passes.append(Pass(rows=len(grouped), width=width, tokens=sum(g.end - root for g in grouped), head=head,
                           pairs=len(grouped) * width * (root + width), syncs=0 if root else MASK_CHECK_SYNCS))
        tails = [(g.end, i) for g in grouped for i in g.members if len(seqs[i]) > g.end]
        for chunk in length_chunks([len(seqs[i]) - end for end, i in tails], budget.call_tokens):
            part = [tails[k] for k in chunk]
            w2 = max(len(seqs[i]) - end for end, i in part)
            passes.append(Pass(rows=len(part), width=w2, tokens=sum(len(seqs[i]) - end for end, i in part),
                               head=sum(max(0, len(seqs[i]) - max(end, requests[i].first)) for end, i in part),
                               pairs=len(part) * w2 * (root + width + w2)))
    return Plan("tree", tuple(passes), budget)


def plain(requests: Sequence[Request], budget: Budget) -> Plan:
    """``Scorer.plain``'s passes: every request in full, right-padded, logits at every position."""
    lengths = [len(r.seq) for r in requests]
    passes = []
    for batch in token_budget_batches(lengths, budget.tokens, budget.max_batch):
        width = max(lengths[i] for i in batch)
        rows = len(batch)
        passes.append(Pass(rows=rows, width=width, tokens=sum(lengths[i] for i in batch), head=rows * width,
                           pairs=rows * width * width,
                           syncs=MASK_CHECK_SYNCS + PLAIN_SYNCS_PER_ROW * rows))
    return Plan("plain", tuple(passes), budget)


def tiles(queries: Sequence[tuple[int, int, Sequence[tuple[int, int]]]], block: int = BLOCK) -> int:
    """Tiles of a block-sparse mask that hold an allowed pair.

    Args:
        queries: Per segment of the pass: its query positions ``[start, end)`` in the pass, and the
            key ranges ``[start, end)`` it reads whole (its ancestors' slots). Its own keys are the
            query positions shifted by the cache length below the pass, read causally; give them as
            the last range, which is then read causally.
        block: The tile's side.

    Returns:
        The number of distinct ``(query tile, key tile)`` pairs that hold an allowed pair.
    """
    kept: set[tuple[int, int]] = set()
    for start, end, ranges in queries:
        *whole, (own_start, _) = ranges
        for qb in range(start // block, (end - 1) // block + 1):
            hi = min(end, (qb + 1) * block)  # one past this tile's last query of the segment
            for k0, k1 in whole:
                kept.update((qb, kb) for kb in range(k0 // block, (k1 - 1) // block + 1))
            # Own keys causal: key own_start + (q - start) for q up to hi - 1.
            last = own_start + (hi - 1 - start)
            kept.update((qb, kb) for kb in range(own_start // block, last // block + 1))
    return len(kept)


def packed_plan(requests: Sequence[Request], budget: Budget, *, share: bool,
                attention: PackedAttention = "blocks", tree_groups: tuple[int, list[Group]] | None = None) -> Plan:
    """``Scorer.packed``'s passes: each tree level (or, without ``share``, each request) laid end to end in
    one row of at most about ``budget.packed`` tokens, attention dense or block-sparse (``tree_groups``: see
    ``tree``).
    """
    seqs = [list(r.seq) for r in requests]
    root, groups = ((tree_groups or shared(requests, budget)) if share
                    else (0, [Group(end=len(s), members=(i,)) for i, s in enumerate(seqs)]))
    passes: list[Pass] = []

    def pairs(tokens: int, keys: int, segments: list[tuple[int, int, list[tuple[int, int]]]]) -> int:
        if attention == "dense":
            return tokens * keys
        return tiles(segments) * BLOCK * BLOCK

    if root:
        head = _span_positions([(r.first, root) for r in requests])
        passes.append(Pass(rows=1, width=root, tokens=root, head=head,
                           pairs=pairs(root, root, [(0, root, [(0, root)])])))
    for batch in fill_packs(groups, seqs, root, budget.packed or budget.tokens):
        grouped = [g for g in batch if g.end > root]
        if not grouped:
            continue
        lengths = [g.end - root for g in grouped]
        offsets = list(accumulate(lengths, initial=0))[:-1]
        tokens = sum(lengths)
        segments = [(o, o + n, ([(0, root)] if root else []) + [(root + o, root + o + n)])
                    for o, n in zip(offsets, lengths, strict=True)]
        head = sum(_span_positions([(max(root, requests[i].first), g.end) for i in g.members]) for g in grouped)
        passes.append(Pass(rows=1, width=tokens, tokens=tokens, head=head,
                           pairs=pairs(tokens, root + tokens, segments)))
        tails = [(k, g.end, i) for k, g in enumerate(grouped) for i in g.members if len(seqs[i]) > g.end]
        if not tails:
            continue
        base = root + tokens
        t_lengths = [len(seqs[i]) - end for _, end, i in tails]
        t_offsets = list(accumulate(t_lengths, initial=0))[:-1]
        t_tokens = sum(t_lengths)
        t_segments = [(o, o + n, ([(0, root)] if root else []) + [(root + offsets[k], root + offsets[k] + lengths[k]),
                                                                   (base + o, base + o + n)])
                      for (k, _, _), o, n in zip(tails, t_offsets, t_lengths, strict=True)]
        passes.append(Pass(rows=1, width=t_tokens, tokens=t_tokens,
                           head=sum(max(0, len(seqs[i]) - max(end, requests[i].first)) for _, end, i in tails),
                           pairs=pairs(t_tokens, base + t_tokens, t_segments)))
    kind = ("packed-tree" if share else "packed") + ("/dense" if attention == "dense" else "")
    return Plan(kind, tuple(passes), budget)


def generation(prompts: Sequence[int], new_tokens: int, budget: Budget) -> Plan:
    """The passes of greedy generation in fixed batches of ``budget``, every answer run to ``new_tokens``
    (an upper bound: a trace that stops early frees its row): a left-padded prefill, then one step per
    new token whose queries read the whole padded cache.
    """
    passes = []
    for batch in token_budget_batches([n + new_tokens for n in prompts], budget.tokens, budget.max_batch):
        rows = len(batch)
        width = max(prompts[i] for i in batch)
        passes.append(Pass(rows=rows, width=width, tokens=sum(prompts[i] for i in batch), head=rows,
                           pairs=rows * width * width, syncs=DECODE_SYNCS_PER_STEP))
        passes.extend(Pass(rows=rows, width=1, tokens=rows, head=rows, pairs=rows * (width + step),
                           syncs=DECODE_SYNCS_PER_STEP) for step in range(1, new_tokens))
    return Plan("generate", tuple(passes), budget)


PACK_CAPS = (1024, 2048, 4096, 8192, 16384, 32768)
"""Tokens per packed pass the choice weighs, below the memory budget: a dense mask's attention grows with
the pass's length, a block-sparse one's does not, and every pass pays a fixed cost (``WEIGHT_READ_TOKENS``)."""

WEIGHT_READ_TOKENS = 184
"""What one more pass costs on a card, in positions of body work: a pass reads every weight once, which on
an H200 (790 TFLOP/s of bf16 matrix work measured, about 4.3 TB/s of memory read) takes as long as the
matrix work of 790 / 4.3 ≈ 184 positions (2 FLOP and 2 bytes per parameter and position). The CPU's is
measured: ``placement.CALL_TOKENS``."""


def candidates(requests: Sequence[Request], budget: Budget, *, padded: bool, packed: bool,
               attention: PackedAttention = "blocks", pass_tokens: int = WEIGHT_READ_TOKENS) -> list[Plan]:
    """The plans a call may run.

    With ``padded``: the padded tree (the plain path without ``prefix_reuse``) as ``budget`` says, and where
    it runs each tree level in one pass (``call_tokens`` None, a card's default), the tree whose tails are
    bucketed by length at ``pass_tokens`` a pass. With ``packed``: the packed plans at each cap of
    ``PACK_CAPS`` below ``budget.tokens``, and at it.
    """
    out = []
    groups = shared(requests, budget) if budget.prefix_reuse else None  # once for every candidate
    padded_budget = replace(budget, packed=None)
    if padded and not budget.prefix_reuse:
        out.append(plain(requests, padded_budget))
    elif padded:
        out.append(tree(requests, padded_budget, groups))
        if budget.call_tokens is None:
            out.append(tree(requests, replace(padded_budget, call_tokens=pass_tokens), groups))
    if packed:
        caps = [c for c in PACK_CAPS if c < budget.tokens] + [budget.tokens]
        out += [packed_plan(requests, replace(budget, packed=cap), share=budget.prefix_reuse, attention=attention,
                            tree_groups=groups) for cap in caps]
    return out


def choose(shape: Shape, requests: Sequence[Request], budget: Budget, *, padded: bool = True, packed: bool = True,
           attention: PackedAttention = "blocks", pass_tokens: int = WEIGHT_READ_TOKENS) -> Plan:
    """The candidate plan (``candidates``) of least work: its FLOPs plus ``pass_tokens`` positions of body
    work per pass; the first of equals, so the padded plan where packing saves nothing.
    """
    def cost(plan: Plan) -> int:
        return plan.flops(shape) + len(plan.passes) * pass_tokens * shape.body_flops

    return min(candidates(requests, budget, padded=padded, packed=packed, attention=attention,
                          pass_tokens=pass_tokens), key=cost)
