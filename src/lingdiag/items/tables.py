"""The fit as tables: ``items.csv`` (one row per item of each cell) and ``models.csv`` (one row per
model of each cell), each also as Parquet where pyarrow is installed (the ``items`` extra).

A number that is not identified is an empty cell, never a guess: an item answered by fewer than two
models, an item every model passes or fails (its difficulty would be the prior's), and every
difficulty of an item whose discrimination is near zero (``−c / a`` runs off to infinity). The
chance columns (``separation``, its ``_p`` and ``_q``, ``misfit_q``) are empty where the item was not
tested (the same items). ``text`` and ``gold`` are empty where the runs' records carry none (a run
imported without its dataset's fields). ``irt`` names the item model, and its warning where there is
one (a 2PL on fewer than 30 models).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lingdiag.io.atomic import write_atomic
from lingdiag.io.tabular import write_csv
from lingdiag.items.fitted import CellFit, ItemFit
from lingdiag.items.irt import Z95, Array

ITEM_COLUMNS = ("suite", "condition", "item_id", "text", "gold", "n_models", "n_right", "difficulty",
                "difficulty_low", "difficulty_high", "discrimination", "discrimination_low", "discrimination_high",
                "infit", "outfit", "separation", "separation_p", "separation_q", "misfit_q", "flags",
                "human_agreement", "human_margin", "human_preferred", "irt")
MODEL_COLUMNS = ("suite", "condition", "model", "ability", "ability_low", "ability_high", "items_answered",
                 "accuracy", "irt")


def _num(x: float) -> float | None:
    return round(float(x), 6) if math.isfinite(x) else None


def identified(c: CellFit, f: ItemFit) -> tuple[Array, Array]:
    """Each item's difficulty and discrimination where identified, NaN elsewhere (see the module's text)."""
    n, right = c.n_models, c.n_right
    informative = (n >= 2) & (right > 0) & (right < n) & np.isfinite(c.slope)
    a = np.where(informative, c.slope, np.nan)
    b = np.where(informative & (np.abs(c.slope) >= f.policy.near_zero), c.difficulty, np.nan)
    return b, a


def irt_name(f: ItemFit) -> str:
    """The item model as the tables name it, with its warning where there is one."""
    return f.kind + (f" (warning: {f.warnings[0]})" if f.warnings else "")


def item_rows(f: ItemFit) -> list[dict[str, Any]]:
    """One row per item of every cell (numbers not identified are None)."""
    rows = []
    name = irt_name(f)
    for c in f.cells:
        ch = c.chance
        n, right = c.n_models, c.n_right
        b, b_se, a, a_se = c.difficulty, c.difficulty_se, c.slope, c.slope_se
        shown_b_all, shown_a_all = identified(c, f)
        flagged = c.item_flags(f.kind, f.policy)
        for j, item in enumerate(c.item_ids):
            informative = bool(np.isfinite(shown_a_all[j]))
            shown_b = bool(np.isfinite(shown_b_all[j]))
            human = c.human.get(item)
            shown = c.texts.get(item)
            rows.append({
                "suite": c.suite, "condition": c.condition, "item_id": item,
                "text": shown.text if shown else None, "gold": shown.gold if shown else None, "n_models": int(n[j]),
                "n_right": int(right[j]),
                "difficulty": _num(b[j]) if shown_b else None,
                "difficulty_low": _num(b[j] - Z95 * b_se[j]) if shown_b else None,
                "difficulty_high": _num(b[j] + Z95 * b_se[j]) if shown_b else None,
                "discrimination": _num(a[j]) if informative else None,
                "discrimination_low": _num(a[j] - Z95 * a_se[j]) if informative else None,
                "discrimination_high": _num(a[j] + Z95 * a_se[j]) if informative else None,
                "infit": _num(c.infit[j]) if informative else None,
                "outfit": _num(c.outfit[j]) if informative else None,
                "separation": _num(ch.separation[j]), "separation_p": _num(ch.reversed.p[j]),
                "separation_q": _num(ch.reversed.q[j]), "misfit_q": _num(ch.misfit.q[j]),
                "flags": "; ".join(flagged[j]),
                "human_agreement": human.verdict if human else None,
                "human_margin": _num(human.margin) if human else None,
                "human_preferred": human.preferred if human else None,
                "irt": name})
    return rows


def model_rows(f: ItemFit) -> list[dict[str, Any]]:
    """One row per model of every cell."""
    rows = []
    name = irt_name(f)
    for c in f.cells:
        answered = c.answered
        right = (c.responses == 1).sum(1)
        for k, model in enumerate(c.models):
            th, se = float(c.ability[k]), float(c.ability_se[k])
            rows.append({"suite": c.suite, "condition": c.condition, "model": model, "ability": _num(th),
                         "ability_low": _num(th - Z95 * se), "ability_high": _num(th + Z95 * se),
                         "items_answered": int(answered[k]),
                         "accuracy": _num(right[k] / answered[k]) if answered[k] else None, "irt": name})
    return rows


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def write_tables(f: ItemFit, out: Path) -> tuple[list[Path], str | None]:
    """Write ``items.csv`` and ``models.csv`` (and their Parquet twins where pyarrow is installed); the
    files written and, where Parquet could not be written, why.
    """
    written = []
    for name, columns, rows in (("items", ITEM_COLUMNS, item_rows(f)), ("models", MODEL_COLUMNS, model_rows(f))):
        path = Path(out) / f"{name}.csv"
        write_csv(path, columns, ([_cell(r[c]) for c in columns] for r in rows))
        written.append(path)
    try:
        import pyarrow  # noqa: F401  (pandas writes Parquet through it)
    except ImportError:
        return written, "no Parquet files: they need pyarrow (pip install 'lingdiag[items]')"
    import pandas as pd

    for name, columns, rows in (("items", ITEM_COLUMNS, item_rows(f)), ("models", MODEL_COLUMNS, model_rows(f))):
        buf = io.BytesIO()
        pd.DataFrame(rows, columns=list(columns)).to_parquet(buf, index=False)
        path = Path(out) / f"{name}.parquet"
        write_atomic(path, buf.getvalue())
        written.append(path)
    return written, None


def flagged_first(c: CellFit, f: ItemFit) -> Sequence[int]:
    """The cell's item positions, flagged items first (the lowest separation first), the rest in the
    cell's order.
    """
    flagged = c.item_flags(f.kind, f.policy)
    r = np.where(np.isfinite(c.chance.separation), c.chance.separation, np.inf)
    return sorted(range(len(c.item_ids)), key=lambda j: (not flagged[j], float(r[j]) if flagged[j] else 0.0, j))
