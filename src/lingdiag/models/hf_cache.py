"""A key/value cache that reads selected rows of another, for the last level of a prefix tree.

Imported only by the transformers backend, after torch and transformers are loaded.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache


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
        keys = torch.cat([layer.keys.index_select(0, self.rows), key_states], dim=-2)
        values = torch.cat([layer.values.index_select(0, self.rows), value_states], dim=-2)
        return keys, values
