"""Key/value caches that share a prompt prefix between batch rows instead of copying it.

Imported only by the transformers backend, after torch and transformers are loaded.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from lingdiag.models.hf.load import on_device


class RowView(DynamicCache):
    """Rows ``rows`` of ``parent``, gathered one layer at a time as the model reads them.

    The last level of the log-likelihood prefix tree continues each group's cache with one
    row per request and never reads its own keys again. Copying the parent's rows for every
    layer up front, as a new ``DynamicCache`` would, and keeping the concatenated keys held
    both in memory at once (on SmolLM2 with an 8k-token batch, ~0.4 GB each); here only one
    layer's gathered rows exist at a time, and nothing is stored.

    Lengths and mask sizes are the parent's: its rows are left-padded to one width. The
    parent is not modified.
    """

    def __init__(self, parent: DynamicCache, rows: torch.Tensor) -> None:
        # Skip DynamicCache.__init__: the parent's layer objects answer every length query.
        super(DynamicCache, self).__init__(layers=parent.layers)
        self.rows = rows

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int,
               *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """The parent's rows for ``layer_idx`` followed by the new keys and values."""
        layer: Any = self.layers[layer_idx]  # a DynamicLayer (or its sliding variant) of the parent
        rows = on_device(self.rows, layer.keys.device)
        keys = torch.cat([layer.keys.index_select(0, rows), key_states], dim=-2)
        values = torch.cat([layer.values.index_select(0, rows), value_states], dim=-2)
        return keys, values


class PrefixedLayer(DynamicLayer):  # type: ignore[no-untyped-call]  # transformers' untyped hook
    """One layer's keys and values: a prefix shared by every row, stored once, then each row's own.

    Generation requests of one call share their prompt's start (system prompt, few-shot
    block). Copying that prefix into every row of a batch made it the largest part of the
    cache (on the ImperfectiveNLI zero-shot prompt, 39 of ~105 tokens per row). Attention
    still sees the whole sequence: each update returns the prefix expanded to the rows
    followed by their own keys, a temporary the size of the copy, for one layer at a time.
    """

    def __init__(self, parent: Any) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.prefix_keys: torch.Tensor = parent.keys
        self.prefix_values: torch.Tensor = parent.values
        # Sliding-window layers stay marked as such for the mask; the backend shares a
        # prefix only while no sequence can outgrow the window.
        self.is_sliding = parent.is_sliding

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor,
               *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the rows' new keys; return the prefix and every key of each row."""
        own_keys, own_values = super().update(key_states, value_states)
        rows = own_keys.shape[0]
        keys = torch.cat([self.prefix_keys.expand(rows, -1, -1, -1), own_keys], dim=-2)
        values = torch.cat([self.prefix_values.expand(rows, -1, -1, -1), own_values], dim=-2)
        return keys, values

    def get_seq_length(self) -> int:
        """Prefix plus own tokens."""
        return int(self.prefix_keys.shape[-2]) + super().get_seq_length()

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep rows ``indices`` (of the rows' own keys; the prefix is shared)."""
        assert self.keys is not None and self.values is not None, "rows are selected after a forward pass"
        indices = on_device(indices, self.keys.device)
        self.keys = self.keys[indices, ...]
        self.values = self.values[indices, ...]


class PrefixedCache(DynamicCache):
    """A cache whose rows all continue ``prefix``, a one-row cache (see ``PrefixedLayer``)."""

    def __init__(self, prefix: DynamicCache) -> None:
        super(DynamicCache, self).__init__(layers=[PrefixedLayer(layer) for layer in prefix.layers])
