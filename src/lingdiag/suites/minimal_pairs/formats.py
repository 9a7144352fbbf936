"""The published minimal-pair formats, and the one place their fields are mapped.

Every format becomes the same items: fields ``sentence_good``/``sentence_bad`` (BLiMP's
one-prefix fields where given), gold ``good``, and tags in BLiMP's vocabulary, which the
suite's tables group by: ``UID`` (the paradigm), ``linguistics_term`` (the phenomenon),
``field`` and, for every format but BLiMP, ``language`` (BLiMP's records carry no language
tag, so that they stay as they were; it is English).

- ``blimp``: JSONL, ``UID``, ``pairID``, ``linguistics_term``, ``field`` (Warstadt et al. 2020).
- ``sling``: JSONL, ``paradigm``, ``pair_ID``, ``phenomenon``, ``field``; Mandarin (Song et al. 2022).
- ``clams``: text lines ``True<TAB>sentence`` each followed by its ungrammatical variants
  ``False<TAB>sentence`` (Mueller et al. 2020); the language is the folder's ``<lang>_evalset``.

A file's format is detected (JSONL by its pair-id key, CLAMS by its first line) or named
(``--dataset FORMAT:PATH``). A pair whose sentences are identical or empty is *excluded*:
never scored, counted and listed (``Dataset.excluded``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_jsonl, read_text
from lingdiag.records import Item
from lingdiag.rundir import Excluded
from lingdiag.suites.minimal_pairs.data import GOOD

ONE_PREFIX = ("one_prefix_prefix", "one_prefix_word_good", "one_prefix_word_bad")
UNKNOWN_LANGUAGE = "und"
"""BCP 47's "undetermined": a CLAMS file outside a ``<lang>_evalset`` folder."""
IDENTICAL, EMPTY = "good and bad sentences identical", "empty sentence"


@dataclass(frozen=True)
class Pairs:
    """What one file holds: the scorable pairs and the excluded ones."""

    items: list[Item]
    excluded: list[Excluded]


def degenerate(good: str, bad: str) -> str | None:
    """Why a pair cannot be scored (an empty sentence, or no difference), else None."""
    if not good.strip() or not bad.strip():
        return EMPTY
    if good.strip() == bad.strip():
        return IDENTICAL
    return None


def _sorted_out(items: list[Item]) -> Pairs:
    kept, excluded = [], []
    for it in items:
        reason = degenerate(it.fields["sentence_good"], it.fields["sentence_bad"])
        if reason is None:
            kept.append(it)
        else:
            excluded.append(Excluded(it.id, reason))
    return Pairs(kept, excluded)


@dataclass(frozen=True)
class JsonFields:
    """A BLiMP-style JSONL format: which key holds each part of a pair."""

    paradigm: str
    pair_id: str
    phenomenon: str
    language: str | None
    """The format's language tag; None: no tag (BLiMP, whose records predate languages)."""
    good: str = "sentence_good"
    bad: str = "sentence_bad"
    field: str = "field"

    def row_item(self, path: Path, n: int, row: Any) -> Item:
        """The item of JSONL row ``n``; a malformed row is a one-line ``DatasetError``."""
        if not isinstance(row, dict):
            raise DatasetError("not a JSON object", path=path, row=n)
        for key in (self.good, self.bad, self.paradigm, self.pair_id):
            if key not in row:
                raise DatasetError("missing", path=path, row=n, field=key)
        for key in (self.good, self.bad, *ONE_PREFIX):
            if key in row and not isinstance(row[key], str):
                raise DatasetError(f"not text: {type(row[key]).__name__}", path=path, row=n, field=key)
        fields = {"sentence_good": row[self.good], "sentence_bad": row[self.bad],
                  **{k: row[k] for k in ONE_PREFIX if k in row}}
        fields["one_prefix_method"] = bool(row.get("one_prefix_method", False)) and all(k in row for k in ONE_PREFIX)
        tags = {"UID": str(row.get(self.paradigm, "")), "linguistics_term": str(row.get(self.phenomenon, "")),
                "field": str(row.get(self.field, ""))}
        if self.language is not None:
            tags["language"] = self.language
        return Item(id=f"{row[self.paradigm]}/{row[self.pair_id]}", fields=fields, gold=GOOD, tags=tags)

    def read(self, path: Path) -> Pairs:
        """Every pair of the file."""
        return _sorted_out([self.row_item(path, n, row) for n, row in read_jsonl(path)])

    def fits(self, path: Path) -> bool:
        """Whether the file's first row has this format's paradigm and pair-id keys."""
        if path.suffix != ".jsonl":
            return False
        for _, row in read_jsonl(path):
            return isinstance(row, dict) and self.paradigm in row and self.pair_id in row
        return False


CLAMS_FOLDER = re.compile(r"^([a-z]{2,3})_evalset$")


@dataclass(frozen=True)
class ClamsLines:
    """CLAMS's test files: ``True<TAB>sentence``, then its ``False<TAB>variant`` lines."""

    def read(self, path: Path) -> Pairs:
        """Every (grammatical, variant) pair; a line out of that order is a one-line ``DatasetError``."""
        folder = CLAMS_FOLDER.match(path.parent.name)
        language = folder.group(1) if folder else UNKNOWN_LANGUAGE
        test = path.stem
        items: list[Item] = []
        good: str | None = None
        for n, line in enumerate(read_text(path).split("\n"), 1):
            if not line.strip():
                continue
            label, sep, sentence = line.partition("\t")
            if not sep or label not in ("True", "False"):
                raise DatasetError("expected True<TAB>sentence or False<TAB>sentence", path=path, row=n, field="label")
            if label == "True":
                good = sentence
                continue
            if good is None:
                raise DatasetError("a False line before any True line", path=path, row=n, field="label")
            items.append(Item(id=f"{language}/{test}/{len(items)}",
                              fields={"sentence_good": good, "sentence_bad": sentence, "one_prefix_method": False},
                              gold=GOOD, tags={"UID": f"{language}/{test}", "linguistics_term": test,
                                               "field": "syntax", "language": language}))
        return _sorted_out(items)

    def fits(self, path: Path) -> bool:
        """Whether the first non-blank line is ``True<TAB>...`` (not a JSONL file)."""
        if path.suffix == ".jsonl":
            return False
        for line in read_text(path).split("\n"):
            if line.strip():
                return line.startswith("True\t")
        return False


@dataclass(frozen=True)
class PairFormat:
    """A named minimal-pair format."""

    name: str
    layout: str
    """One line on how a file of the format looks (error messages and docs)."""
    read: Callable[[Path], Pairs]
    fits: Callable[[Path], bool]


def _json(name: str, fields: JsonFields, layout: str) -> PairFormat:
    return PairFormat(name, layout, fields.read, fields.fits)


FORMATS: Mapping[str, PairFormat] = {f.name: f for f in (
    _json("blimp", JsonFields(paradigm="UID", pair_id="pairID", phenomenon="linguistics_term", language=None),
          "JSONL with sentence_good, sentence_bad, UID, pairID"),
    _json("sling", JsonFields(paradigm="paradigm", pair_id="pair_ID", phenomenon="phenomenon", language="zh"),
          "JSONL with sentence_good, sentence_bad, paradigm, pair_ID"),
    PairFormat("clams", "lines True<TAB>sentence, each followed by False<TAB>variant", ClamsLines().read,
               ClamsLines().fits),
)}
"""Every format ``minimal-pairs`` reads, by name (``--dataset NAME:PATH``)."""


def formats_line() -> str:
    """The formats and their layouts, for a one-line error."""
    return "; ".join(f"{f.name}: {f.layout}" for f in FORMATS.values())


def detect(path: Path) -> PairFormat:
    """The format of ``path``; a file that fits none is a one-line ``DatasetError`` listing them."""
    for f in FORMATS.values():
        if f.fits(path):
            return f
    raise DatasetError(f"fits no minimal-pair format (name one with --dataset FORMAT:PATH); "
                       f"formats: {formats_line()}", path=path, row=1)
