"""The small markdown the suites' tables and analyses write, read into blocks once so that the
HTML and LaTeX renderers only decide how each block looks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    """A ``#`` line."""

    level: int
    """1 for ``#``, 2 for ``##``..."""
    text: str


@dataclass(frozen=True, slots=True)
class Table:
    """A pipe table."""

    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True, slots=True)
class Bullets:
    """Consecutive ``- `` lines."""

    items: list[str]


@dataclass(frozen=True, slots=True)
class Quote:
    """Consecutive ``> `` lines: a note set apart (a suite's scoring policy above its table)."""

    lines: list[str]


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Any other non-empty line."""

    text: str


Block = Heading | Table | Bullets | Quote | Paragraph
_SEPARATOR = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    # A cell's own "|" is written "\|" (metrics.core.table_cell).
    inner = line.strip().removeprefix("|")
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in _SEPARATOR.split(inner)]


def blocks(text: str) -> Iterator[Block]:
    """Headings, pipe tables (the ``|---|`` rule dropped), bullet lists, quoted notes and one-line
    paragraphs; no inline markup is interpreted.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("|") or line.startswith("- "):
            start = k
            while k < len(lines) and lines[k].startswith(line[0] if line[0] == "|" else "- "):
                k += 1
            if line.startswith("|"):
                table = [_cells(b) for b in lines[start:k]]
                yield Table(table[0], [r for r in table[1:] if not set("".join(r)) <= set("-: ")])
            else:
                yield Bullets([b[2:] for b in lines[start:k]])
            continue
        if line.startswith(">"):
            start = k
            while k < len(lines) and lines[k].startswith(">"):
                k += 1
            yield Quote([b[1:].strip() for b in lines[start:k]])
            continue
        if line.startswith("#"):
            yield Heading(len(line) - len(line.lstrip("#")), line.lstrip("#").strip())
        elif line.strip():
            yield Paragraph(line)
        k += 1
