"""Markdown output: table cells with fixed digits and escaped separators, and whole tables.

Every table lingdiag writes (``table.md``, ``--tables``, ``compare``) is rendered here, so a
number reads the same in every table and no cell can shift its row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def fmt(x: Any, digits: int = 2) -> str:
    """A table cell: fixed digits, ``–`` for missing or NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def table_cell(text: str) -> str:
    r"""``text`` as one markdown table cell: ``|`` escaped as ``\|`` and line breaks as spaces
    (a model name or condition holding either would otherwise shift or split the row).
    """
    return " ".join(text.replace("|", "\\|").splitlines())


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-style markdown table; every cell passes through :func:`table_cell`."""
    lines = ["| " + " | ".join(map(table_cell, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(table_cell(fmt(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
