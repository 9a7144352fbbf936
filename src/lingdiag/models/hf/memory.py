"""Device memory: batch budgets sized from free GPU memory, and the out-of-memory back-off.

On the CPU the budgets are measured constants (``placement``); on CUDA a budget of 4,096
tokens would use half a gigabyte of an 80 GB card, so it is sized at each call from the
memory free on the device and what one token costs the model (``TokenCost``). An estimate
can still be wrong (fragmentation, a kernel's workspace): a batch that runs out of memory is
split in two and each half retried (``split_on_oom``), down to one request.

Imported by the backend after torch is loaded.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import torch

from lingdiag.errors import BackendError

BatchKind = Literal["generate", "loglik", "plain"]
"""What a batch runs: generation (prefill and decoding steps), the log-likelihood prefix tree
(logits at scored positions only, a head chunk at a time), or the plain log-likelihood path
(logits at every position)."""

SHARE = 0.8
"""Share of the free device memory a batch may plan to use: the rest absorbs fragmentation,
kernel workspaces and the estimate's error (lm-eval users ask for such a margin, PR #2050)."""
MIN_TOKENS = 256
"""Smallest automatic budget: below it a batch is one short request anyway."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TokenCost:
    """Bytes one token costs a forward pass of a model, from its config."""

    kv: int
    """Its keys and values in every layer's cache."""
    activations: int
    """The transient tensors of a layer's forward pass (residual, attention projections, gated MLP)."""
    logits: int
    """Its logits over the vocabulary: in the model's dtype, then in float32."""

    def per_token(self, kind: BatchKind) -> int:
        """Bytes per batch token for ``kind``.

        Generation holds the cache twice for a moment when continuous batching merges new rows
        into the pool; the tree holds one level's cache plus, one layer at a time, the rows a
        last level reads; the plain path computes logits at every position.
        """
        match kind:
            case "generate":
                return 2 * self.kv + self.activations
            case "loglik":
                return self.kv + self.activations
            case "plain":
                return self.kv + self.activations + self.logits


def token_cost(config: Any, element_size: int) -> TokenCost:
    """What one token costs a model with ``config`` (a transformers config) in ``element_size``-byte weights."""
    text = config.get_text_config()
    hidden, layers = int(text.hidden_size), int(text.num_hidden_layers)
    heads = int(text.num_attention_heads)
    kv_heads = int(getattr(text, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(text, "head_dim", None) or hidden // heads)
    intermediate = int(getattr(text, "intermediate_size", None) or 4 * hidden)
    return TokenCost(kv=2 * layers * kv_heads * head_dim * element_size,
                     activations=(4 * hidden + 3 * intermediate) * element_size,
                     logits=int(text.vocab_size) * (element_size + 4))


def budget_tokens(free: int, cost: TokenCost, kind: BatchKind, reserve: int = 0) -> int:
    """The padded-token budget of a ``kind`` batch that fits ``SHARE`` of ``free`` bytes less ``reserve``."""
    return max(MIN_TOKENS, int(SHARE * max(free - reserve, 0)) // cost.per_token(kind))


def free_bytes(device: torch.device) -> int:
    """Memory a batch can use on ``device``: free on the card plus what torch's allocator holds unused."""
    free, _ = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))


def release() -> None:
    """Give a failed batch's memory back before its halves run.

    Every GPU's cache, whatever device the failing batch was read on: under ``device_map="auto"``
    the inputs or the LM head may be on the CPU while a GPU layer is the one that ran out.
    """
    gc.collect()
    torch.cuda.empty_cache()  # a no-op where CUDA was never initialised


def too_large(device: torch.device, error: torch.OutOfMemoryError) -> BackendError:
    """The one-line error when a single request does not fit."""
    first = str(error).splitlines()[0] if str(error) else "out of memory"
    return BackendError(f"one request does not fit in {device} memory ({first}): lower max_new_tokens or "
                        "--batch-tokens, or spread the model over more devices with device=auto")


def split_on_oom(run: Callable[[Sequence[T]], None], batch: Sequence[T], device: torch.device) -> None:
    """Run ``batch``; when ``device`` runs out of memory, run each half instead, recursively.

    ``run`` must keep nothing of a batch that fails (results are stored only once it returns),
    so a retried request is computed once, in the half it landed in.

    Raises:
        BackendError: A single request does not fit.
    """
    try:
        run(batch)
        return
    except torch.OutOfMemoryError as e:
        if len(batch) == 1:
            raise too_large(device, e) from None
    # Outside the handler: the traceback's frames (and the batch's tensors) are gone by now.
    release()
    half = len(batch) // 2
    split_on_oom(run, batch[:half], device)
    split_on_oom(run, batch[half:], device)


def shrink_on_oom(run: Callable[[int], T], tokens: int, floor: int, device: torch.device) -> T:
    """``run(tokens)``; when ``device`` runs out of memory, ``run`` again with half the budget.

    For work that cannot be split after it started (a continuous-batching pool): it restarts,
    with every row in batches half as large, until batches are single rows (``tokens`` below
    ``floor``, the shortest row).

    Raises:
        BackendError: Single rows do not fit.
    """
    while True:
        try:
            return run(tokens)
        except torch.OutOfMemoryError as e:
            if tokens < floor:
                raise too_large(device, e) from None
        release()
        tokens //= 2


@contextmanager
def small_device(model: Any, tokens: int) -> Iterator[list[int]]:
    """Make ``model`` raise CUDA's out-of-memory error on forward passes of more than ``tokens``
    input tokens (padding included), as a card that holds no more would; yields the refused sizes.

    The back-off's check where no GPU is at hand (CI, ``bench/gpu.py --cpu-smoke``): the real
    model runs every pass that fits.
    """
    refused: list[int] = []

    def hook(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        ids = kwargs.get("input_ids")
        if ids is not None and ids.numel() > tokens:
            refused.append(ids.numel())
            raise torch.OutOfMemoryError(f"CUDA out of memory (simulated: {ids.numel()} > {tokens} tokens)")

    handle = model.base_model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield refused
    finally:
        handle.remove()
