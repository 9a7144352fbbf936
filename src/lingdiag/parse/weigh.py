r"""Weighed options, then an answer: an answer that discusses the labels in turn and then gives a
final answer is read as that final answer when the discussion commits to nothing else.

Models answer so when asked to reason: a list weighing each label (``- True: would need the house
finished. - False: nothing contradicts it. - Unknown: fits.``), an elimination (``A implies
completion; C and D are points in time. That leaves B.``), questions they answer themselves
(``True? No. False? No.``), then ``Answer: Unknown``. The refuse stage reads the discussion's
mentions as answers of their own (a verdict list, several answers); this stage gives the final
answer its place, by the answer's structure, not by taking the last mention (which is how peers
read such answers, and why they give labels the answer did not):

- the **final answer** is the last commitment by an answer cue, a subject, a colon or a line of its
  own (``Answer: B``, ``So the answer is Unknown``, ``That leaves B``), read from its clause on with
  every check of the refuse stage (``Answer: B?`` or ``Answer: maybe B`` commits to nothing);
- the **discussion** is everything before that clause; each of its mentions is taken **for**, taken
  **against** or only weighed (``stance``);
- the final answer stands when the discussion takes no other label for and does not take the final
  one against (``True: fits best. … Answer: Unknown`` and ``Unknown: no. … Answer: Unknown`` commit
  to nothing), and the speaker doubts nothing anywhere.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

from lingdiag.parse import echo
from lingdiag.parse.locate import Commitment, locate
from lingdiag.parse.refuse import denied, local, refusal, verdict
from lingdiag.parse.revise import revised
from lingdiag.parse.scan import CLAUSE_END, QUESTION_MARKS, Scan, Token, Vocabulary

FOR, WEIGHED, AGAINST = 1, 0, -1
"""A discussion's stances on a label: taken for it, only weighed, taken against it."""

FINAL_RULES = ("cue", "subject", "colon", "line")
"""The rules a final answer is located by (``lingdiag.parse.locate``): not a label opening a line or
sentence, which is how a discussion names the label it weighs."""

_LABEL_MARK = re.compile(r"[ \t]*[:=\-–—→][ \t]*(?=\S)")
_LETTER_MARK = re.compile(r"[ \t]*[:=\-–—→).\]][ \t]*(?=\S)")
"""What opens an item's text after its label (``True: …``, ``True — …``) or letter (``A) …``, ``A. …``)."""
_STATEMENT = re.compile(r"[ \t]*(?:$|\n|[.,;!" + re.escape("。，；！、") + "])")
"""What ends a label that opens a sentence as a statement (``True.``, ``True, because …``)."""
_SEPARATORS = " \t\"'()[]*-–—:"
_ALONE = re.compile(r"[ \t\"'()\[\]*\-–—:.?!]*$")
"""What may follow a label alone on its line (a heading's marks), up to the line's end."""


def weighed(s: Scan, vocab: Vocabulary, found: list[Commitment]) -> str | None:
    """The final answer of ``s`` where a discussion of the labels comes before it and commits to
    nothing else (the module's rules), or None.

    Args:
        s: The answer, scanned.
        vocab: Its vocabulary.
        found: Its commitments, in text order (``lingdiag.parse.locate``).
    """
    final = next((c for c in reversed(found) if c.rule in FINAL_RULES), None)
    # Read where it stands too: a clause of its sentence before it may make it a condition (If anything, …).
    if final is None or s.doubted or local(s, final.mention, final.start) is not None:
        return None
    start = s.clause(final.start)[0]
    if not s.mentions or s.mentions[0].start >= start:
        return None  # nothing was discussed before it
    tail = revised(s, start)
    tail_lists = echo.listed(tail, vocab)
    tail_found = locate(tail, vocab, tail_lists)
    if not tail_found:
        return None
    reason, kept = refusal(tail, tail_found, tail_lists)
    if reason is not None:
        return None
    if cut_off(tail, kept[0].mention):
        return None
    label = kept[0].label
    return None if contradicted(s, vocab, label, start) else label


_CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u201e": "\u201c", "\u00ab": "\u00bb",
            "\u300c": "\u300d", "\u300e": "\u300f", "(": ")", "[": "]", "{": "}", "*": "*", "`": "`"}
"""What closes a quote, bracket or emphasis a final answer is opened by."""


def cut_off(s: Scan, m: Token) -> bool:
    """Whether the final answer ``m`` is opened by a quote, bracket or emphasis that does not close after it
    (``"label": "True`` at the end of an answer cut at its token limit): the value may go on (``"True" /
    "False"``), so it commits to nothing.
    """
    before = s.text[:m.start].rstrip(" \t")
    closer = _CLOSERS.get(before[-1:])
    return closer is not None and not s.text[m.end:].lstrip(" \t").startswith(closer)


def contradicted(s: Scan, vocab: Vocabulary, label: str, start: int) -> bool:
    """Whether the discussion before ``start`` (where the answer ``label`` is given) takes another
    label for or ``label`` against: a list weighing the labels that ends ``Unknown: fits best`` is
    no discussion of an answer ``True``.
    """
    if not s.mentions or s.mentions[0].start >= start:
        return False
    head = echo.cut(s, s.clause(start)[0])
    return any((taken == FOR and m.label != label) or (taken == AGAINST and m.label == label)
               for m, taken in stances(head, vocab))


def stances(s: Scan, vocab: Vocabulary) -> Iterator[tuple[Token, int]]:
    """Each mention of the discussion ``s`` with the stance it takes on its label:

    - a verdict (``True: no``, ``B – correct``), a denial (``it is not True``, ``A is wrong``) or a
      question answered in the next sentence (``True? No.``) takes its side;
    - an item (``True: …``, ``A) in an hour – …``, a label alone on a line above its discussion) is
      taken for when its text affirms it (``fits``, ``correct``), against when it judges it
      (``incorrect``, ``unlikely``) or opens with a no; else it is only weighed, where the
      discussion itemizes several labels, and taken for where it gives only this one;
    - any other mention the discussion commits to cleanly is taken for (``The answer is True.``,
      ``True. The premise…``, ``B is correct``), one it hedges or conditions is only weighed, and a
      label opening a sentence it does not end (``True would require…``) is the topic weighed.
    """
    lists = echo.listed(s, vocab)
    committed: dict[Token, Commitment] = {}
    for c in locate(s, vocab, lists):  # a label opening its sentence is read by what else commits to it
        if c.mention not in committed or committed[c.mention].rule == "leading":
            committed[c.mention] = c
    items = dict(_items(s, vocab))
    itemized = len({m.label for m in items}) > 1
    for m in s.mentions:
        yield m, _stance(s, m, items, itemized, lists, committed.get(m))


def _stance(s: Scan, m: Token, items: dict[Token, tuple[int, int]], itemized: bool, lists: frozenset[Token],
            c: Commitment | None) -> int:
    word = verdict(s, m)
    if word is not None:
        return FOR if word.of("affirmations") and not (word.of("negations") or word.of("judgements")) else AGAINST
    if denied(s, m):
        return AGAINST
    if m in items:
        taken = _text_stance(s, *items[m])
        return taken if taken != WEIGHED or itemized else FOR
    if any(ch in QUESTION_MARKS for ch in s.sentence_mark(m.start)):
        return _answered(s, m)
    if m in lists or c is None:
        return WEIGHED
    why = local(s, m, c.start)
    if why is None:
        # "True would require …": the topic of its sentence, weighed; "True." or "True, because …" is stated.
        return FOR if c.rule != "leading" or _stated(s, m) else WEIGHED
    return AGAINST if why in ("negated", "judged") else WEIGHED


def _stated(s: Scan, m: Token) -> bool:
    """Whether the label ``m`` ends its clause as a statement: a full stop, a comma, the line's end or
    a reason word right after it.
    """
    pos = s.past_particles(m.end)
    if _STATEMENT.match(s.text, pos):
        return True
    nxt = next(s.after(pos), None)
    return nxt is not None and nxt.of("reasons") and not s.text[pos:nxt.start].strip()


def _items(s: Scan, vocab: Vocabulary) -> Iterator[tuple[Token, tuple[int, int]]]:
    """The mentions that open an item of the discussion, with the span of the item's text: a label
    and a mark, then text on its line (``True: …``, ``A) …``); a label alone on its line, then a
    line of text naming no label first (a heading).
    """
    text = s.text
    # Line ends found once and looked up by bisection: a search per mention along a long line is quadratic.
    ends = [m.start() for m in re.finditer("\n", text)] + [len(text)]
    for m in s.mentions:
        pos = s.past_particles(m.end)
        k = bisect_left(ends, pos)
        line_end = ends[k]
        nxt = s.mention_at_or_after(m.end)
        mark = (_LETTER_MARK if m.letter else _LABEL_MARK).match(text, pos)
        if mark is not None and mark.end() < line_end:
            yield m, (mark.end(), min(line_end, nxt.start if nxt is not None else line_end))
            continue
        line_start = ends[k - 1] + 1 if k else 0
        if not _ALONE.match(text, pos, line_end) or text[line_start:m.start].strip(_SEPARATORS):
            continue
        below_end = ends[k + 1] if k + 1 < len(ends) else len(text)
        if line_end < len(text) and (nxt is None or nxt.start >= below_end
                                     or text[line_end + 1:nxt.start].strip(_SEPARATORS)):
            yield m, (line_end + 1, min(below_end, nxt.start if nxt is not None else below_end))


def _text_stance(s: Scan, start: int, end: int) -> int:
    """What an item's text says of its label: a judgement (not itself denied: ``not wrong``) or a
    leading no is against it, an affirmation neither denied nor hedged in its clause is for it.
    """
    words = [t for t in s.within(start, end) if t.label is None]
    if words and words[0].of("negations") and not s.text[start:words[0].start].strip(_SEPARATORS) \
            and CLAUSE_END.match(s.text[words[0].end:end].lstrip(" \t") or "\n"):
        return AGAINST  # "False: No.", "True – no, the premise…"
    unsure = any(w.of("hedges") or w.of("conditions") for w in words)
    negation = -1  # where the last negation stands
    for t in words:
        negated = negation >= max(start, s.clause(t.start)[0])
        if t.of("judgements"):
            return FOR if negated else AGAINST
        if t.of("affirmations") and not negated and not unsure:
            return FOR
        if t.of("negations"):
            negation = t.start
    return WEIGHED


def _answered(s: Scan, m: Token) -> int:
    """A label asked about, answered by the next sentence's first word (``True? No.``, ``Unknown? Yes —``)."""
    _, end = s.sentence(m.start)
    nxt = next(s.after(end + 1), None)
    if nxt is None or s.text[end:nxt.start].strip(" \t\n\"'*?!" + "".join(QUESTION_MARKS)):
        return WEIGHED
    if nxt.of("affirmations") and nxt.label is None:
        return FOR
    return AGAINST if nxt.of("negations") else WEIGHED
