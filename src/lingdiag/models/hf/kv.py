"""Key/value caches that share a prompt prefix between batch rows instead of copying it.

Imported only by the transformers backend, after torch and transformers are loaded.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import Cache, DynamicCache
from transformers.cache_utils import CacheLayerMixin, DynamicLayer

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


class SlotLayer(CacheLayerMixin):  # type: ignore[no-untyped-call]  # transformers' untyped hook
    """One layer's keys and values in tensors of a fixed shape ``[rows, heads, slots, dim]``, written in place.

    A decoding step writes each row's new key into that row's own next slot (its owner's ``columns``,
    one for every layer) instead of growing the cache by ``torch.cat``, which copies every key of every
    row at every step. Attention reads all ``slots``; the mask says which hold a row's tokens, so the
    shapes stay fixed while a batch decodes (until it drops its finished rows: ``batch_select_indices``).
    """

    is_compileable = True
    is_sliding = False

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, owner: SlotCache) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.keys: torch.Tensor = keys
        self.values: torch.Tensor = values
        self.owner = owner
        """The cache whose ``columns`` say where each row writes."""
        self.is_initialized = True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        """Nothing: the tensors exist from the start."""

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor,
               *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the one new key and value of each row at its column; return every slot."""
        rows, heads, _, dim = key_states.shape
        index = self.owner.columns.to(key_states.device).view(rows, 1, 1, 1)
        self.keys.scatter_(2, index.expand(rows, heads, 1, dim), key_states)
        self.values.scatter_(2, index.expand(rows, heads, 1, value_states.shape[-1]), value_states)
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep rows ``indices`` (the owner keeps their columns)."""
        self.keys, self.values = self.keys.index_select(0, indices), self.values.index_select(0, indices)

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        """Every slot, from the first."""
        return self.get_max_length(), 0

    def get_seq_length(self) -> int:
        """The query's place for the causal mask: the last slot, so that the causal rule masks nothing and
        the padding mask alone says what each row reads (rows hold different lengths).
        """
        return self.get_max_length() - 1

    def get_max_length(self) -> int:
        """The slots per row."""
        return int(self.keys.shape[-2])


class SlotCache(Cache):
    """A cache of ``SlotLayer`` s: ``rows`` × ``slots`` per layer, allocated once beside ``like``'s layers."""

    def __init__(self, like: Cache, rows: int, slots: int) -> None:
        sources: list[Any] = list(like.layers)
        self.columns = torch.zeros(rows, dtype=torch.long, device=sources[0].keys.device)
        self.slot_layers: list[SlotLayer] = []
        for layer in sources:
            keys, values = layer.keys, layer.values
            assert keys is not None and values is not None, "a slot cache is built after a prefill"
            shape = (rows, keys.shape[1], slots)
            self.slot_layers.append(SlotLayer(keys.new_zeros(*shape, keys.shape[3]),
                                              values.new_zeros(*shape, values.shape[3]), self))
        super().__init__(layers=list(self.slot_layers))
