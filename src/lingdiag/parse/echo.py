r"""What an answer repeats rather than answers: lists of labels or options, and invented next items.

A **list** is two or more different labels joined by nothing but separators and joiner words
(``True, False, or Unknown``, ``B or C``, ``对还是错``), consecutive lines that each hold one
label or open with one as an item (``True\nFalse\nUnknown``, ``- A. then\n- B. so``), or one
line opening several options (``A) in an hour B) for an hour``). Its mentions are no answer,
and an answer cue pointing at one is refused (``Answer: B or C``).

An **invented next item** is a line opening with an item word and a colon (``Premise:``,
``Question 2:``) after the answer was given: the model went on to make up the next example and
answer it; it is read up to there.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lingdiag.parse.scan import MARKS, Scan, Token, Vocabulary

_SEPARATORS = re.compile(r"[\s,/|、&+()\[\]\"'·]*")
_ITEM_MARK = re.compile(r"[ \t]*(?:[).:\]]|\s[-–—])")
_TRIM = " \t\"'()[].,;:!?¡¿-–—*「」『』【】" + MARKS


def listed(s: Scan, vocab: Vocabulary) -> frozenset[Token]:
    """The mentions of ``s`` that stand in a list (the module's rules)."""
    return frozenset(_inline(s) | _vertical(s) | _options_on_a_line(s, vocab))


def _joined(s: Scan, a: Token, b: Token) -> bool:
    """Whether only separators and joiner words stand between ``a`` and ``b``."""
    pos = a.end
    for t in s.within(a.end, b.start):
        if not t.of("joiners") or t.label is not None:  # "A, not B" is no list: it denies B
            return False
        if not _SEPARATORS.fullmatch(s.text, pos, t.start):
            return False
        pos = t.end
    return _SEPARATORS.fullmatch(s.text, pos, b.start) is not None


def _inline(s: Scan) -> set[Token]:
    out: set[Token] = set()
    chain = list(s.mentions[:1])
    for a, b in zip(s.mentions, s.mentions[1:], strict=False):
        if _joined(s, a, b) and "\n" not in s.text[a.end:b.start]:
            chain.append(b)
            continue
        if len({t.label for t in chain}) > 1:
            out |= set(chain)
        chain = [b]
    if len({t.label for t in chain}) > 1:
        out |= set(chain)
    return out


def _opening(s: Scan, start: int, end: int) -> tuple[Token, str] | None:
    """The mention a line ``[start, end)`` holds alone (``lone``) or opens as an item (``item``:
    ``A. then``, ``True:``).
    """
    first = s.mention_at_or_after(start)
    if first is None or first.start >= end or s.text[start:first.start].strip(_TRIM):
        return None
    rest = s.text[first.end:end]
    if not rest.strip(_TRIM):
        return first, "lone"
    return (first, "item") if _ITEM_MARK.match(rest) else None


def _vertical(s: Scan) -> set[Token]:
    r"""Consecutive lines of one shape (each a lone label, or each an item) naming different labels;
    a lone label right after two or more items, and not among them, is the list's last item, cut off
    (``- C. then\n- D.``: what ExpliCa's GPT-4o-mini answers end with when their 50 tokens run out).
    """
    out: set[Token] = set()
    run: list[Token] = []
    shape = ""
    pos = 0
    for line in s.text.split("\n") + [""]:
        found = _opening(s, pos, pos + len(line)) if line else None
        if found is not None and found[1] == "lone" and shape == "item" and len(run) > 1 \
                and found[0].label not in {m.label for m in run}:
            found = (found[0], "item")  # an item whose text never came (a label the list already holds is an answer)
        if found is None or found[1] != shape:
            if len({m.label for m in run}) > 1:
                out |= set(run)
            run, shape = [], found[1] if found else ""
        if found is not None:
            run.append(found[0])
        pos += len(line) + 1
    return out


def _options_on_a_line(s: Scan, vocab: Vocabulary) -> set[Token]:
    """Letters opening two or more different options on one line (``A) in an hour B) for an hour``):
    each followed by one marker and its option's text, or, where options have no text, by the same
    marker as the others (``B. (A) is incorrect`` is no list).
    """
    out: set[Token] = set()
    texts = dict(vocab.options)
    pos = 0
    for line in s.text.split("\n"):
        end = pos + len(line)
        marked: dict[str, list[Token]] = {}
        for t in s.within(pos, end):
            m = _OPTION_MARK.match(s.text, t.end, end) if t.letter else None
            text = texts.get(str(t.label), "").lower()
            # What follows as far as the option's text reaches, not the rest of the line (linear in a long line).
            if m is not None and (not text or s.text[m.end():m.end() + len(text)].lower() == text):
                marked.setdefault(m.group(1) if not text else "text", []).append(t)
        for items in marked.values():
            if len({t.label for t in items}) > 1:
                out |= set(items)
        pos = end + 1
    return out


_OPTION_MARK = re.compile(r"([).:\]])\s*(?=\S)")
_ITEM = re.compile(r"[ \t]*(?:\d{1,3}|[A-Z])?[ \t]*[:.)]")


def invented_item(s: Scan, after: int) -> int | None:
    """Where a made-up next item begins after position ``after`` (a line opening with an item word
    and a colon), or None.
    """
    for t in s.after(after + 1):
        if not t.of("items"):
            continue
        line_start = s.text.rfind("\n", 0, t.start) + 1
        if line_start > after and not s.text[line_start:t.start].strip() and _ITEM.match(s.text, t.end):
            return line_start
    return None


def cut(s: Scan, end: int) -> Scan:
    """``s`` up to ``end``."""
    return replace(s, text=s.text[:end].rstrip(), tokens=tuple(t for t in s.tokens if t.end <= end))
