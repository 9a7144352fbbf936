"""The shared-prefix forward pass: one level of a prefix tree on top of rows computed before.

Generation runs a call's common prompt prefix through it once (``decode``); log-likelihood
scoring runs its three-level tree through it (``score``). torch and transformers are
imported inside the functions, on the first forward pass.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lingdiag.models.hf.batching import token_budget_batches
from lingdiag.models.hf.load import LoadedModel, on_device, staged
from lingdiag.models.progress import tick

if TYPE_CHECKING:
    import torch


@dataclass
class Rows:
    """Batched rows computed so far: their key/value cache and 2D attention mask."""

    cache: Any
    """A transformers ``DynamicCache`` with one batch row per row."""
    mask: torch.Tensor
    """``[rows, slots]``: 1 for real tokens, 0 for padding between and before segments."""
    length: torch.Tensor
    """``[rows]``: real tokens so far, i.e. the position id of each row's next token."""


@dataclass
class Packed:
    """Segments laid end to end in one row of keys and values (no padding), and what each segment reads."""

    cache: Any
    """A transformers ``DynamicCache`` of one batch row: every segment's keys and values, in order."""
    segment: torch.Tensor
    """``[slots]``: the segment each cache slot belongs to."""
    ancestors: torch.Tensor
    """``[segments, segments]`` bool: ``[s, a]`` when segment ``s`` continues segment ``a`` (a parent,
    its parent, ...), so that ``s`` attends to all of ``a``."""
    end: list[int]
    """Per segment: its real tokens so far with its ancestors', i.e. the position id of the token after it."""


class Forward:
    """Forward passes of the transformer body over left-padded or packed segments."""

    def __init__(self, lm: LoadedModel, usage: Counter[str]) -> None:
        """Run ``lm``'s model, counting tokens into ``usage``.

        Args:
            lm: The model (loaded on the first pass).
            usage: The backend's work counters (``forward_tokens``, ``padded_tokens``), updated.
        """
        self.lm = lm
        self.placement = lm.placement
        self.usage = usage

    def expand_cache(self, cache: Any, rows: torch.Tensor) -> Any:
        """A new cache whose row ``r`` copies row ``rows[r]`` of ``cache`` (which is not modified)."""
        from transformers import DynamicCache

        layers = [(layer.keys.index_select(0, idx), layer.values.index_select(0, idx))
                  for layer in cache.layers for idx in [on_device(rows, layer.keys.device)]]
        return DynamicCache(ddp_cache_data=layers, config=self.lm.model.config)

    def extend(self, base: Rows | None, parents: Sequence[int],
               segments: Sequence[Sequence[int]], keep: bool = True) -> tuple[Rows | None, torch.Tensor]:
        """Run one level of the prefix tree.

        Args:
            base: Rows computed so far (None to start from scratch).
            parents: For each new row, the row of ``base`` it continues.
            segments: For each new row, its tokens (non-empty), left-padded to one width.
            keep: Whether the new rows' cache is needed later; a last level reads its
                parents' rows one layer at a time instead of copying them (``RowView``).

        Returns:
            The new rows (None unless ``keep``) and their last hidden states ``[rows, width, hidden]``.
        """
        import torch
        from transformers import DynamicCache

        from lingdiag.models.hf.kv import RowView

        width = max(len(s) for s in segments)
        pad = self.lm.tokenizer.pad_token_id
        device = self.lm.input_device
        ids = staged([[pad] * (width - len(s)) + list(s) for s in segments], device)
        seg_mask = staged([[0] * (width - len(s)) + [1] * len(s) for s in segments], device)
        if base is None:
            start = torch.zeros(len(segments), dtype=torch.long, device=device)
            mask, cache = seg_mask, DynamicCache(config=self.lm.model.config)
        else:
            idx = staged([int(p) for p in parents], device)
            start = base.length.index_select(0, idx)
            mask = torch.cat([base.mask.index_select(0, idx), seg_mask], dim=1)
            cache = self.expand_cache(base.cache, idx) if keep else RowView(base.cache, idx)
        positions = (start[:, None] + seg_mask.cumsum(1) - 1).clamp(min=0)
        # Counted on the host: reading the mask's sum back would wait for the device.
        self.usage.update(forward_tokens=sum(len(s) for s in segments), padded_tokens=ids.numel())
        with torch.inference_mode():
            out = self.lm.model.base_model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                           cache=cache, use_cache=True)
        rows = Rows(out.cache, mask, start + seg_mask.sum(1)) if keep else None
        return rows, out.last_hidden_state

    def pack(self, base: Packed | None, parents: Sequence[int],
             segments: Sequence[Sequence[int]]) -> tuple[Packed, torch.Tensor, list[int]]:
        """Run segments packed into one row, each continuing a segment of ``base``: no padding.

        A token reads its parent segment's tokens (and theirs, up the tree) and the tokens before
        it in its own segment, through a boolean 4D mask, or where the placement says
        (``packed_attention="blocks"``, CUDA) a block-sparse one (``attention.document_mask``) whose
        kernel skips the tiles no token reads; its position id counts from its parent's
        end, so each segment computes what it would in a row of its own. ``base`` is not modified
        (the new cache concatenates onto its tensors).

        Args:
            base: Segments computed so far (None to start from scratch).
            parents: With ``base``: for each segment, the index of the ``base`` segment it continues.
            segments: The tokens of each new segment (non-empty).

        Returns:
            The segments so far (``base``'s then these), the new tokens' last hidden states
            ``[1, tokens, hidden]``, and where each segment starts in them.
        """
        import torch
        from transformers import DynamicCache

        device = self.lm.input_device
        lengths = [len(s) for s in segments]
        offsets = [0, *itertools.accumulate(lengths[:-1])]
        old = 0 if base is None else len(base.end)
        starts = [0] * len(segments) if base is None else [base.end[p] for p in parents]
        # Built on the host and staged: nothing in a packed pass waits for the device.
        ids = staged([[t for s in segments for t in s]], device)
        mine = staged([old + k for k, n in enumerate(lengths) for _ in range(n)], device)
        positions = staged([[b + j for b, n in zip(starts, lengths, strict=True) for j in range(n)]], device)
        ancestors = torch.zeros(old + len(segments), old + len(segments), dtype=torch.bool, device=device)
        if base is None:
            cache, segment = DynamicCache(config=self.lm.model.config), mine
        else:
            par = staged([int(p) for p in parents], device)
            ancestors[:old, :old] = base.ancestors
            ancestors[old:, :old] = base.ancestors.index_select(0, par)
            ancestors[torch.arange(old, old + len(segments), device=device), par] = True
            cache = DynamicCache(ddp_cache_data=[(layer.keys, layer.values) for layer in base.cache.layers],
                                 config=self.lm.model.config)
            segment = torch.cat([base.segment, mine])
        self.usage.update(forward_tokens=ids.numel(), padded_tokens=ids.numel())
        cached = 0 if base is None else len(base.segment)
        with torch.inference_mode():
            if self.placement.packed_attention == "blocks":
                from lingdiag.models.hf.attention import block_sparse, document_mask

                with block_sparse(self.lm.model):
                    out = self.lm.model.base_model(input_ids=ids, position_ids=positions, cache=cache, use_cache=True,
                                                   attention_mask=document_mask(mine, segment, ancestors, cached))
            else:
                own = (mine[:, None] == mine[None, :]).tril_()
                mask = own if base is None else torch.cat([ancestors[mine][:, base.segment], own], dim=1)
                out = self.lm.model.base_model(input_ids=ids, attention_mask=mask[None, None],
                                               position_ids=positions, cache=cache, use_cache=True)
        ends = ([] if base is None else base.end) + [b + n for b, n in zip(starts, lengths, strict=True)]
        return Packed(out.cache, segment, ancestors, ends), out.last_hidden_state, offsets


def full_logits(lm: LoadedModel, usage: Counter[str], seqs: Sequence[list[int]], tokens: int, max_batch: int,
                use: Callable[[list[int], torch.Tensor], None]) -> None:
    """Logits at every position of ``seqs``, right-padded in batches of at most ``tokens`` padded
    tokens and ``max_batch`` rows: the plain scoring paths. Calls ``use`` with each batch's request
    indices and its ``[rows, width, vocab]`` logits (row k holds ``seqs[batch[k]]``). A batch that
    runs out of device memory is split and its halves run again (``memory.split_on_oom``), so
    ``use`` may be called again for the same requests and must only store per-request results.
    """
    import torch

    from lingdiag.models.hf.memory import split_on_oom

    pad = lm.tokenizer.pad_token_id
    device = lm.input_device

    def run(batch: Sequence[int]) -> None:
        rows = list(batch)
        width = max(len(seqs[i]) for i in rows)
        ids = torch.tensor([seqs[i] + [pad] * (width - len(seqs[i])) for i in rows], device=device)
        mask = torch.tensor([[1] * len(seqs[i]) + [0] * (width - len(seqs[i])) for i in rows], device=device)
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, attention_mask=mask).logits
        usage.update(forward_tokens=sum(len(seqs[i]) for i in rows), padded_tokens=ids.numel(),
                     head_positions=ids.numel())
        use(rows, logits)
        tick(requests=len(rows))

    for batch in token_budget_batches([len(s) for s in seqs], tokens, max_batch):
        split_on_oom(run, batch, device)
