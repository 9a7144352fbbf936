"""The scoring-policy sweep read from results: how much conditions run under several policies disagree.

A suite whose items are scored by log-likelihood offers the ``scoring-policy`` axis
(``lingdiag run SUITE --scoring-policy lingdiag,lm-eval,minicons``; ``lingdiag.conditions.scoring_policy``).
Each condition records
its per-item outcomes compactly in its metrics (``outcomes``), so the table can show, from
result rows alone, how far the headline metric moves between policies and the share of
items whose outcome flips.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.conditions.scoring_policy import AXIS
from lingdiag.io.markdown import markdown_table
from lingdiag.records import ItemRecord, ResultRow

OUTCOMES = "outcomes"
"""Metrics key: ``{"ids_sha256": …, "correct": "0110…"}`` over the items sorted by id."""


def outcomes(records: Sequence[ItemRecord]) -> dict[str, str]:
    """One condition's per-item correctness, compact: a digest of the item ids and a bit string."""
    ordered = sorted((r for r in records if r.correct is not None), key=lambda r: r.item_id)
    ids = "\n".join(r.item_id for r in ordered)
    return {"ids_sha256": hashlib.sha256(ids.encode()).hexdigest(),
            "correct": "".join("1" if r.correct else "0" for r in ordered)}


def _flip_share(a: dict[str, str], b: dict[str, str]) -> float | None:
    if a["ids_sha256"] != b["ids_sha256"] or not a["correct"]:
        return None  # different item sets (e.g. --limit): no item-wise comparison
    return sum(x != y for x, y in zip(a["correct"], b["correct"], strict=True)) / len(a["correct"])


def _any_flip(outcomes: Sequence[Any]) -> float | None:
    """Share of items whose outcome is not the same under every policy (None: item sets differ)."""
    if not outcomes or any(not isinstance(o, dict) for o in outcomes) or \
            len({o["ids_sha256"] for o in outcomes}) != 1 or not outcomes[0]["correct"]:
        return None
    columns = list(zip(*(o["correct"] for o in outcomes), strict=True))
    return sum(len(set(c)) > 1 for c in columns) / len(columns)


def section(rows: Sequence[ResultRow], headline: str, label: str) -> str:
    """A markdown table per group of rows that differ only in scoring policy: the headline metric
    per policy, its spread (max − min), and the share of items whose outcome differs from the first
    policy's. Empty when no group has two policies.
    """
    groups: dict[tuple[Any, ...], list[ResultRow]] = defaultdict(list)
    for r in rows:
        rest = tuple(sorted((k, v) for k, v in r.axes.items() if k != AXIS))
        groups[(r.model, rest)].append(r)
    out = []
    for (model, rest), members in groups.items():
        if len({r.axes.get(AXIS) for r in members}) < 2:
            continue
        values = [r.metrics.get(headline) for r in members]
        numbers = [v for v in values if isinstance(v, float | int)]
        spread = max(numbers) - min(numbers) if numbers else None
        base = members[0]
        table = markdown_table(
            ["Scoring policy", label, f"Δ vs {base.axes.get(AXIS)}", f"Items flipped vs {base.axes.get(AXIS)}"],
            [[r.axes.get(AXIS), v, (v - values[0]) if isinstance(v, float) and isinstance(values[0], float) else None,
              _flip_share(base.metrics[OUTCOMES], r.metrics[OUTCOMES])
              if OUTCOMES in base.metrics and OUTCOMES in r.metrics else None]
             for r, v in zip(members, values, strict=True)])
        where = ", ".join(f"{k} {v}" for k, v in rest)
        anywhere = _any_flip([r.metrics.get(OUTCOMES) for r in members])
        out.append(f"**Scoring-policy sweep** ({model}{'; ' + where if where else ''}): {label} moves by "
                   + (f"{spread:.3f}" if spread is not None else "–") + " between policies (max − min)"
                   + (f"; {anywhere:.1%} of the items change outcome under some policy" if anywhere is not None else "")
                   + f".\n\n{table}")
    return "\n".join(out)
