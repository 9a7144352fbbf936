"""Lexical association between the two halves of each item (ExpliCa §3.1).

For every content lemma ``x`` of the first half and ``y`` of the second, over a corpus of
``N`` units (one per line: a sentence or a document) where ``f(x)`` units hold ``x`` and
``f(x, y)`` hold both (Church & Hanks 1990; Evert 2004, local MI):

    PMI(x, y) = log2(f(x, y) · N / (f(x) · f(y)))        LMI(x, y) = f(x, y) · PMI(x, y)

A pair that never co-occurs has no PMI and is left out; an item's score is the mean over its
remaining pairs (each distinct lemma pair once), and an item with none has no score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_table, read_text

Pair = tuple[str, str]
"""Two lemmas in sorted order (co-occurrence is symmetric)."""


def pair(x: str, y: str) -> Pair:
    """The sorted pair of ``x`` and ``y``."""
    return (x, y) if x <= y else (y, x)


@dataclass(frozen=True, slots=True)
class Counts:
    """Unit counts over a corpus: how many units hold each lemma, and each pair of lemmas."""

    n: int
    """Units (lines) in the corpus."""
    unigrams: Mapping[str, int]
    pairs: Mapping[Pair, int]
    source: str = ""
    """The corpus or counts file read, for the report."""


@dataclass(frozen=True, slots=True)
class ItemAssociation:
    """One item's association scores."""

    item_id: str
    label: str
    """The item's class."""
    pmi: float | None
    """Mean PMI over the item's co-occurring lemma pairs; None when no pair co-occurs."""
    lmi: float | None
    n_pairs: int
    """Distinct (first-half lemma, second-half lemma) pairs."""
    n_scored: int
    """Of those, the pairs that co-occur in the corpus."""
    pairs: Sequence[tuple[str, str, float, float]] = field(default=())
    """(x, y, PMI, LMI) of each scored pair."""


def count_corpus(path: Path, lemmas: Callable[[str], list[str]], wanted: Iterable[Pair],
                 words: Iterable[str] = ()) -> Counts:
    """Count, over the lines of a plain-text corpus, the units holding each lemma of ``wanted``
    (and of ``words``) and each ``wanted`` pair (only those: a corpus's full pair table would not
    fit in memory).
    """
    wanted = set(wanted)
    vocab = {w for p in wanted for w in p} | set(words)
    uni: dict[str, int] = dict.fromkeys(sorted(vocab), 0)
    pairs: dict[Pair, int] = dict.fromkeys(sorted(wanted), 0)
    n = 0
    for line in read_text(path).splitlines():
        if not line.strip():
            continue
        n += 1
        present = sorted(vocab.intersection(lemmas(line)))
        for i, x in enumerate(present):
            uni[x] += 1
            for y in present[i:]:
                if (x, y) in pairs:
                    pairs[(x, y)] += 1
    if n == 0:
        raise DatasetError("the corpus has no non-empty line", path=path)
    return Counts(n, uni, pairs, str(path))


def read_counts(path: Path) -> Counts:
    """A counts file: TSV/CSV with columns ``lemma1, lemma2, count``. ``* *`` gives the number
    of units, ``x *`` the units holding ``x`` and ``x y`` those holding both (either order).
    """
    columns, rows = read_table(path)
    for col in ("lemma1", "lemma2", "count"):
        if col not in columns:
            raise DatasetError("missing column (needed: lemma1, lemma2, count)", path=path, field=col)
    n, uni, pairs = None, {}, {}
    for i, row in enumerate(rows, 2):
        x, y = row["lemma1"].strip().lower(), row["lemma2"].strip().lower()
        try:
            c = int(row["count"])
        except ValueError:
            raise DatasetError(f"expected a whole number, found {row['count']!r}", path=path, row=i,
                               field="count") from None
        if c < 0:
            raise DatasetError("a count cannot be negative", path=path, row=i, field="count")
        if x == "*" and y == "*":
            n = c
        elif y == "*":
            uni[x] = c
        elif x == "*":
            raise DatasetError("write a unigram as `lemma *`, not `* lemma`", path=path, row=i, field="lemma1")
        else:
            pairs[pair(x, y)] = c
    if not n:
        raise DatasetError("no `* *` row giving the number of corpus units", path=path)
    return Counts(n, uni, pairs, str(path))


def wanted_pairs(halves: Iterable[tuple[Sequence[str], Sequence[str]]]) -> set[Pair]:
    """Every cross-half lemma pair of the items' (first lemmas, second lemmas)."""
    return {pair(x, y) for a, b in halves for x in set(a) for y in set(b)}


def pmi_lmi(counts: Counts, x: str, y: str) -> tuple[float, float] | None:
    """(PMI, LMI) of ``x`` and ``y``; None when they never co-occur."""
    fxy = counts.pairs.get(pair(x, y), 0)
    fx, fy = counts.unigrams.get(x, 0), counts.unigrams.get(y, 0)
    if fxy == 0 or fx == 0 or fy == 0:
        return None
    pmi = math.log2(fxy * counts.n / (fx * fy))
    return pmi, fxy * pmi


def association_scores(item_id: str, label: str, first: Sequence[str], second: Sequence[str],
                       counts: Counts) -> ItemAssociation:
    """One item's mean PMI and LMI over its distinct cross-half lemma pairs."""
    cells = sorted({(x, y) for x in set(first) for y in set(second)})
    scored = [(x, y, *s) for x, y in cells if (s := pmi_lmi(counts, x, y)) is not None]
    if not scored:
        return ItemAssociation(item_id, label, None, None, len(cells), 0)
    return ItemAssociation(item_id, label, sum(s[2] for s in scored) / len(scored),
                           sum(s[3] for s in scored) / len(scored), len(cells), len(scored), tuple(scored))
