"""Surprisal per token of every text a record scored with per-token log-probabilities
(``LoglikelihoodRequest.per_token``): each token's surprisal in bits, the SyntaxGym regions it falls in
(by the same assignment as the scores, :func:`lingdiag.prompts.regions.assign`), and, for a minimal
pair, the words where the two sentences differ.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.prompts import regions
from lingdiag.prompts.surprisal import SURPRISAL
from lingdiag.records import ItemRecord, ScoreOutput

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Token:
    """One scored token."""

    start: int
    """Its first character in the text (a space the policy put before the text: 0)."""
    end: int
    bits: float
    """Surprisal, ``-log2 p``."""
    region: int | None
    """Index of the region it counts in (None: no regions, or none)."""
    differs: bool
    """It overlaps a word where the two texts of a minimal pair differ."""


@dataclass(frozen=True, slots=True)
class Scored:
    """One scored text of a record, token by token."""

    name: str
    """Its SyntaxGym condition, or ``text N``."""
    text: str
    tokens: tuple[Token, ...]
    regions: tuple[tuple[int, int, str], ...]
    """``(start, end, region number)`` of each non-empty region (SyntaxGym), else none."""
    per_region: bool = False
    """Each "token" is a whole region, from the surprisals the prediction recorded (a run without
    ``--per-token``)."""


def _per_token(prompt: Any, output: Any) -> tuple[str, list[tuple[int, int]], list[float]] | None:
    if not (isinstance(prompt, Mapping) and isinstance(output, ScoreOutput)):
        return None
    text, spans, lps = prompt.get("continuation"), output.token_spans, output.token_logprobs
    if not isinstance(text, str) or spans is None or lps is None:
        return None
    return text, [(max(a, 0), b) for a, b in spans], list(lps)


def _numbers(r: ItemRecord, condition: str, count: int) -> list[str]:
    """The region numbers of a SyntaxGym condition (``region_numbers``), else 1, 2, …"""
    numbers = r.fields.get("region_numbers")
    given = numbers.get(condition) if isinstance(numbers, Mapping) else None
    return [str(n) for n in given] if isinstance(given, list) and len(given) == count \
        else [str(k + 1) for k in range(count)]


def _regions(r: ItemRecord, texts: Sequence[str]) -> list[tuple[str, regions.Joined, Sequence[str]]] | None:
    """SyntaxGym's condition (name, joined regions, region numbers) of each scored text, if the record has
    them. Matched by the joined text, not by position: the record's fields are stored with sorted keys,
    while the requests follow the suite's order.
    """
    conditions = r.fields.get("conditions")
    if not isinstance(conditions, Mapping) or len(conditions) != len(texts):
        return None
    by_text: dict[str, list[tuple[str, regions.Joined, Sequence[str]]]] = {}
    for name, contents in conditions.items():
        if not isinstance(contents, list) or not all(isinstance(c, str) for c in contents):
            return None
        names = _numbers(r, str(name), len(contents))
        joined = regions.join(contents)
        by_text.setdefault(joined.text, []).append((str(name), joined, names))
    out = []
    for t in texts:
        if not by_text.get(t):
            return None
        out.append(by_text[t].pop(0))
    return out


def _differing(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The character spans of the words where ``a`` and ``b`` differ, in each."""
    wa, wb = list(_WORD.finditer(a)), list(_WORD.finditer(b))
    matcher = difflib.SequenceMatcher(a=[m.group() for m in wa], b=[m.group() for m in wb], autojunk=False)
    da: list[tuple[int, int]] = []
    db: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            da += [m.span() for m in wa[i1:i2]]
            db += [m.span() for m in wb[j1:j2]]
    return da, db


def _by_region(r: ItemRecord) -> list[Scored]:
    """SyntaxGym's region surprisals as the prediction recorded them (``surprisal_bits``), one text per
    condition, each region one span; none where the record holds none.
    """
    recorded, conditions = r.detail.get(SURPRISAL), r.fields.get("conditions")
    if not isinstance(recorded, Mapping) or not isinstance(conditions, Mapping):
        return []
    out = []
    for name, values in recorded.items():
        contents = conditions.get(name)
        if not isinstance(contents, list) or not isinstance(values, list) or len(values) != len(contents):
            return []
        joined = regions.join([str(c) for c in contents])
        label = _numbers(r, str(name), len(contents))
        spans = [(k, a, b) for k, (a, b) in enumerate(joined.spans) if b > a]
        out.append(Scored(str(name), joined.text, tuple(Token(a, b, float(values[k]), n, False)
                                                        for n, (k, a, b) in enumerate(spans)),
                          tuple((a, b, label[k]) for k, a, b in spans), per_region=True))
    return out


def scored(r: ItemRecord) -> list[Scored]:
    """Every text of ``r`` scored with per-token log-probs, in request order; else SyntaxGym's recorded
    region surprisals (:func:`_by_region`); else none.
    """
    found = [x for x in (_per_token(p, o) for p, o in zip(r.prompts, r.outputs, strict=False)) if x is not None]
    if not found:
        return _by_region(r)
    conditions = _regions(r, [text for text, _, _ in found])
    differ = _differing(found[0][0], found[1][0]) if len(found) == 2 and conditions is None else ([], [])
    out = []
    for k, (text, spans, lps) in enumerate(found):
        joined = conditions[k][1] if conditions else None
        where = regions.assign(joined, spans) if joined is not None else [None] * len(spans)
        marks = differ[k] if k < 2 else []
        tokens = tuple(Token(a, b, -lp / math.log(2), where[n], any(a < e and s < b for s, e in marks))
                       for n, ((a, b), lp) in enumerate(zip(spans, lps, strict=True)))
        named = tuple((a, b, conditions[k][2][n]) for n, (a, b) in enumerate(joined.spans) if b > a) \
            if conditions and joined is not None else ()
        out.append(Scored(conditions[k][0] if conditions else f"text {k + 1}", text, tokens, named))
    return out
