"""The study report's "Items across models" section: per cell, each item's share of models right (the
hardest first where there are more than :data:`ITEMS_SHOWN`), the items every model fails, the items that
split families or sizes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lingdiag.io.markdown import markdown_table
from lingdiag.reading.summary import RIGHT
from lingdiag.study import across
from lingdiag.study.sections import Drawn, StudySection, register, size, some

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study

ITEMS_SHOWN = 200
"""Rows of an items-across-models table (the items fewest models get right first, where there are more)."""
NAMES_SHOWN = 20
"""Models named in one cell (an item's models right); more are counted."""

def _items(study: Study) -> Drawn:
    """Per cell: each item's share of models right (the hardest first where there are more than
    :data:`ITEMS_SHOWN`), the items every model fails, the items that split families or sizes.
    """
    families = {s.label: s.entry.model.family for s in study.runs}
    sizes = {s.label: size(s.entry.model.n_params) or s.label for s in study.runs}
    names = study.items
    parts, found = [], []
    for cell, table in study.tables.items():
        if len(table.models) < 2:
            continue
        shares = across.item_shares(table)
        rated = np.flatnonzero(shares.graded > 0)
        failed = rated[shares.right[rated] == 0]
        split = across.splits(table, families, "family") + across.splits(table, sizes, "size")
        found.append(f"{cell[0]} {cell[1]}: {len(failed)} of {len(rated)} items every model fails.")
        shown = rated if len(rated) <= ITEMS_SHOWN else \
            rated[np.argsort(shares.share[rated], kind="stable")[:ITEMS_SHOWN]]
        body = [[names[table.items[k]], int(shares.right[k]), int(shares.graded[k]), f"{shares.share[k]:.2f}",
                 some([m for j, m in enumerate(table.models) if table.outcome[k, j] == RIGHT], NAMES_SHOWN)]
                for k in shown]
        more = (f"\nThe {ITEMS_SHOWN} items the fewest models get right of {len(rated)}; `lingdiag view` shows "
                "every item across the models.\n") if len(rated) > len(shown) else ""
        listed = ", ".join(names[table.items[k]] for k in failed[:ITEMS_SHOWN]) or "none"
        parts.append(f"### Items across models: {cell[0]}, {cell[1]}\n\n"
                     + markdown_table(["Item", "Models right", "Models graded", "Share right", "Right"], body) + more
                     + f"\nItems every model fails ({len(failed)}): {listed}"
                     + (f" and {len(failed) - ITEMS_SHOWN} more" if len(failed) > ITEMS_SHOWN else "") + ".\n")
        if split:
            parts.append(f"### Items that split families or sizes: {cell[0]}, {cell[1]}\n\n" + markdown_table(
                ["Item", "By", "All right", "All wrong"],
                [[names[table.items[x.item]], x.by, x.right, x.wrong] for x in split[:ITEMS_SHOWN]])
                + (f"\n{len(split) - ITEMS_SHOWN} more items split them.\n" if len(split) > ITEMS_SHOWN else ""))
    return Drawn("\n".join(parts) or "Items across models need two models on a condition.\n", found=found)


register(StudySection("study-items", "Items across models", 70, _items))
