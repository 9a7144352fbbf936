"""The prompts as the authors ran them (``-o prompt_source=authors``).

What ``experimentSetup.py`` of the release (github.com/melissatorgbi/beyond-memorization)
builds for one test row, re-implemented: the instruction of ``prompts/CxNLI_prompts.py``
(texts in ``prompts_authors.yaml``), then the in-context examples, then the question. An
example file's triples are numbered by their position in the file; an item gets every
example whose ``CxN Type`` cell equals its own (none when the file has no such key), or all
``None`` (SNLI) examples. Cells are used as the files have them, unstripped, and a relation
cell loses its ``(name)`` only, so ``0 (entailment)`` is shown as ``0 `` (trailing space).
The authors chose examples this way, not by sampling; their seed 43 is the API's seed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any, Final

import yaml

from lingdiag.records import Item
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli.prompts import CxnliPrompt

AUTHORS: Final = "authors"
PAPER: Final = "paper"
SNLI_KEY = "None"
"""The ``CxN Type`` of the SNLI example files, which the authors' SNLI settings look up."""

Numbered = Mapping[str, tuple[tuple[int, data.Triple], ...]]
"""In-context examples by ``CxN Type`` cell, each with its 1-based position in its file."""
RawItems = Mapping[str, tuple[str, str, str]]
"""Item id → the test row's ``CxN Type``, premise and hypothesis cells as in the file."""


@cache
def prompts() -> dict[str, Any]:
    """The authors' instruction texts, CoT texts and formats (``prompts_authors.yaml``)."""
    text = files("lingdiag.suites.cxnli").joinpath("prompts_authors.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


VARIANTS = tuple(prompts()["variants"])
COT_VARIANTS = tuple(prompts()["cot"])


def key(triple: data.Triple) -> str:
    """The ``CxN Type`` cell the authors group by (the canonical name for generated triples)."""
    if triple.raw:
        return triple.raw[0]
    return SNLI_KEY if triple.construction == data.NONE else triple.construction


def relation(triple: data.Triple) -> str:
    """The relation as an example shows it: the cell without its ``(name)``."""
    cell = triple.raw[3] if triple.raw else f"{data.LABELS.index(triple.label)} ({triple.label})"
    return re.sub(r"\(.*\)", "", cell)


def number(triples: Iterable[data.Triple]) -> dict[str, tuple[tuple[int, data.Triple], ...]]:
    """Group an example file's triples (in file order) by :func:`key`, numbered from 1."""
    out: dict[str, list[tuple[int, data.Triple]]] = {}
    for n, t in enumerate(triples, 1):
        out.setdefault(key(t), []).append((n, t))
    return {k: tuple(v) for k, v in out.items()}


def raw_items(triples: Sequence[data.Triple], items: Sequence[Item]) -> dict[str, tuple[str, str, str]]:
    """The raw cells of test items made by :func:`data.to_items` from ``triples`` (same order)."""
    assert len(triples) == len(items)
    return {it.id: (t.raw[0], t.raw[1], t.raw[2]) for t, it in zip(triples, items, strict=True) if t.raw}


@dataclass(frozen=True)
class AuthorsPrompt(CxnliPrompt):
    """One user turn built as ``experimentSetup.py`` builds it (``_generate_prompt``).

    ``instruction`` ends in a newline; ``example`` and ``question`` open with one, so a blank
    line follows the instruction and each example.
    """

    numbered: Numbered = field(default_factory=dict)
    raw: RawItems = field(default_factory=dict)
    snli: bool = False

    def _cells(self, item: Item) -> tuple[str, str, str]:
        if item.id in self.raw:
            return self.raw[item.id]
        # Generated items: the authors' test files name an Exp 2 row by its Exp 1 form.
        return str(item.tags["schema"]), str(item.fields["premise"]), str(item.fields["hypothesis"])

    def _shots(self, item: Item) -> tuple[tuple[int, data.Triple], ...]:
        return self.numbered.get(SNLI_KEY if self.snli else self._cells(item)[0], ())

    def examples(self, item: Item) -> tuple[data.Triple, ...]:
        """The in-context triples shown with ``item``, in file order."""
        return tuple(t for _, t in self._shots(item))

    def text(self, item: Item) -> str:
        """The whole prompt for ``item``."""
        shots = "".join(
            self.example.format(n=n, premise=t.raw[1] if t.raw else t.premise,
                                hypothesis=t.raw[2] if t.raw else t.hypothesis, relation=relation(t))
            for n, t in self._shots(item))
        _, premise, hypothesis = self._cells(item)
        return self.instruction + shots + self.question.format(premise=premise, hypothesis=hypothesis)
