"""Block-sparse attention for packed passes: a document mask that skips the tiles no query may read.

A packed pass lays thousands of segments end to end in one row (``Forward.pack``). Under a dense 4D
mask the attention kernel computes every query against every key of the row, so its cost grows with
the square of the pass (on an H200, 63% of the kernel time at 427k-token passes; bench/README.md).
Here the same mask is given to PyTorch's FlexAttention as a ``BlockMask`` (``create_block_mask``):
the kernel computes only the ``128 × 128`` tiles that hold an allowed pair, so a pass costs about
the sum of its segments' squares (``workplan.tiles`` counts them). On CUDA the kernel is compiled
(``torch.compile(flex_attention)``, once per process); on the CPU FlexAttention runs its eager
reference, which computes every tile but gives the same answers, so the CPU tests check it.

The model's attention modules pick their function by ``config._attn_implementation``;
``block_sparse`` switches it to this one for the packed pass only and back after.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

NAME = "lingdiag_block_sparse"
"""The name this attention function is registered under in transformers' ``AttentionInterface``."""


def document_mask(query_segment: torch.Tensor, key_segment: torch.Tensor, ancestors: torch.Tensor,
                  cached: int) -> Any:
    """The ``BlockMask`` of a packed pass.

    Args:
        query_segment: ``[queries]``: the segment of each new token.
        key_segment: ``[keys]``: the segment of each key slot (the cache below the pass, then the new tokens).
        ancestors: ``[segments, segments]`` bool: ``[s, a]`` when segment ``s`` reads all of segment ``a``.
        cached: Key slots below the pass: the new token ``q`` is key slot ``cached + q``.

    Returns:
        A query reads a key of its own segment up to itself, and every key of its ancestors.
    """
    from torch.nn.attention.flex_attention import create_block_mask

    def allowed(batch: Any, head: Any, q: Any, kv: Any) -> Any:
        own, key = query_segment[q], key_segment[kv]
        return ((own == key) & (kv <= q + cached)) | ancestors[own, key]

    device = query_segment.device
    return create_block_mask(allowed, B=None, H=None, Q_LEN=len(query_segment), KV_LEN=len(key_segment),
                             device=device, _compile=device.type == "cuda")


@cache
def _kernel(cuda: bool) -> Any:
    """FlexAttention: compiled on CUDA (the block-sparse kernel), the eager reference on the CPU."""
    import torch
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention) if cuda else flex_attention


def attend(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
           scaling: float | None = None, softcap: float | None = None, **kwargs: Any) -> tuple[torch.Tensor, None]:
    """Transformers' attention-function signature over a ``BlockMask`` (``[batch, heads, tokens, dim]`` in,
    ``[batch, tokens, heads, dim]`` out).
    """
    score_mod = None
    if softcap:
        import torch

        def score_mod(score: Any, batch: Any, head: Any, q: Any, kv: Any) -> Any:
            return softcap * torch.tanh(score / softcap)

    with warnings.catch_warnings():
        # The CPU's eager reference says it computes every tile: known, and said in this module's docstring.
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        out = _kernel(query.device.type == "cuda")(query, key, value, score_mod=score_mod,
                                                    block_mask=attention_mask, scale=scaling,
                                                    enable_gqa=query.shape[1] != key.shape[1])
    return out.transpose(1, 2).contiguous(), None


@contextmanager
def block_sparse(model: Any) -> Iterator[None]:
    """Run ``model``'s attention through ``attend`` inside the block (for a pass given a ``document_mask``)."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, attend)
    config = model.config
    before = config._attn_implementation
    config._attn_implementation = NAME
    try:
        yield
    finally:
        config._attn_implementation = before
