r"""Where an answer commits to a label: the reader's locating stage.

Each commitment names its rule (a parsed record's ``detail["rule"]``):

- ``cue``: an answer cue, then up to a few words and a copula or ``:``/``=``, then the label
  (``The correct answer is: True``, ``Option C``, ``答案是对``, ``Antwort: C``, ``I would say False``);
  an option's text there names its letter (``Answer: for an hour``), a lower-case letter is a
  letter there (``answer: b``) unless a word follows it (``The answer is a bit…``);
- ``subject``: what may be said to be a label, a copula, the label ending its clause
  (``The hypothesis is true.``, ``This is False.``);
- ``whole-answer`` / ``line``: the answer, or one of its lines, is a label, a letter, a letter
  and its option's text (``B) for an hour``) or an option's text, alone or with its own letter in
  brackets (``for an hour (B)``);
- ``leading``: a line opens with a label (``True. The premise…``, ``C\nThe sentence…``,
  ``False because…``, ``Verdadero según el texto``);
- ``affirmed``: a label confirmed by a copula and an affirmation (``B is correct``);
- ``colon``: a label after a colon that ends its line (``After careful consideration: Unknown.``).

A mention in a list (``lingdiag.parse.echo``) commits to nothing; a cue pointing at one is
marked ``listed`` and refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from lingdiag.parse.language import PUNCTUATION
from lingdiag.parse.scan import CLAUSE_END, MARKS, UNSPACED, Scan, Token, Vocabulary, affirms

_GAP = re.compile(r"[\s:,=\-–—>→\"'(\[" + re.escape("".join(p.clause for p in PUNCTUATION)) + "]*")
_AROUND = " \t\"'()[]{}.,;:!?¡¿-–—*<>「」『』【】→" + MARKS
_FILLER_WORDS = 2
_CLOSERS = ")]}\"'」』】"
_CUE_REACH = 48
_LETTER_OK = re.compile(r"$|[\s]*[\n.,;:!?)\]]|[ \t]+(?=[^\w\s])")
_LOWER_LETTER = re.compile(r"[A-Za-z](?![\w'])")
_SLACK_WORD = re.compile(r"[ \t]+[^\W\d_]+(?=[ \t]*[.,;:!?\n]|[ \t]*$)")
_LEAD = re.compile("[" + re.escape(_AROUND) + "]*")
_STOPS = re.compile("[.\n" + re.escape("".join(p.sentence for p in PUNCTUATION)) + "]")
_WINDOW = 256
"""Characters read after a position where only what stands right there matters (never the whole rest)."""


RULE_ORDER = ("json", "cue", "subject", "whole-answer", "line", "leading", "affirmed", "colon")
"""The rules, the one a reading names first where several commit to its label."""


@dataclass(frozen=True, slots=True)
class Commitment:
    """A place where the answer commits to a label."""

    label: str
    rule: str
    mention: Token
    """The label's mention (made up for an option's text or a lower-case letter)."""
    start: int
    """Where the committing phrase begins (the cue's start, else the mention's)."""
    listed: bool = False
    """The cue points at a list of labels."""


def locate(s: Scan, vocab: Vocabulary, lists: frozenset[Token]) -> list[Commitment]:
    """Every commitment of ``s``, in text order."""
    found = [*_cues(s, vocab, lists), *_lines(s, vocab, lists), *_sentences(s, vocab, lists), *_affirmed(s, lists),
             *_colons(s, vocab, lists)]
    unique: dict[tuple[int, str], Commitment] = {}
    for c in found:  # one per mention and rule: a mention a cue and a colon both commit to is read by either
        unique.setdefault((c.mention.start, c.rule), c)
    return sorted(unique.values(), key=lambda c: (c.mention.start, RULE_ORDER.index(c.rule)))


def _after_copula(s: Scan, start: int, end: int, copula: bool = False) -> int | None:
    """Where the filler after the last copula of ``[start, end)`` begins, if the gap reads
    ``… copula [up to two words]`` (``copula``: the cue before ``start`` is one, ``c'est``, ``es``)
    or is separators only; else None.
    """
    if _GAP.fullmatch(s.text, start, end) or _articles_only(s, start, end):
        return start
    copulas = [t.end for t in s.within(start, end) if t.of("copulas")]
    colon = [start + m.end() for m in re.finditer(r"[:=→]", s.text[start:end])]
    last = max([*copulas, *colon, *([start] if copula else [])], default=None)
    if last is None:
        return None
    filler = s.text[last:end]
    if _STOPS.search(filler):
        return None
    if UNSPACED.search(filler):
        return last if len(filler.strip()) <= 4 else None
    spaced = [w for w in re.split(r"[\s\"'()\[\]]+", filler) if w]
    return last if len(spaced) <= _FILLER_WORDS else None


def _articles_only(s: Scan, start: int, end: int) -> bool:
    """Whether ``[start, end)`` holds separators and determiners only (``Elijo la B``)."""
    words = s.within(start, end)
    pos = start
    for t in words:
        if not t.of("determiners") or not _GAP.fullmatch(s.text, pos, t.start):
            return False
        pos = t.end
    return bool(words) and _GAP.fullmatch(s.text, pos, end) is not None


def _target(s: Scan, vocab: Vocabulary, cue: Token, end: int) -> tuple[Token, bool] | None:
    """The label mention, lower-case letter or option text ``cue`` points at, within ``end``, and
    whether only separators stand between them (``Option C``, ``Answer: B``).
    """
    pos, copula = s.past_particles(cue.end), cue.of("copulas")  # 정답은 참: a particle closes the cue
    nxt = s.mention_at_or_after(pos)
    text = s.text
    gap_end = nxt.start if nxt is not None and nxt.start < end else end
    # An option's text or a lower-case letter right after the gap (``Answer: for an hour``, ``answer: b``).
    stops = {pos, *(t.end for t in s.within(pos, gap_end) if t.of("copulas"))}
    for stop in sorted(stops):
        here = _GAP.match(text, stop, gap_end)
        at = here.end() if here else stop
        made = _text_or_letter(s, vocab, at)
        if made is not None and _after_copula(s, pos, made.start, copula) is not None:
            return made, False
    if nxt is None or nxt.start >= end or _after_copula(s, pos, nxt.start, copula) is None:
        return None
    return nxt, bool(_GAP.fullmatch(text, pos, nxt.start)) and not copula


def _text_or_letter(s: Scan, vocab: Vocabulary, at: int) -> Token | None:
    """A made-up mention for the option text or the lower-case letter at ``at``."""
    if not vocab.options:
        return None
    for text, letter in vocab.longest_texts:  # what follows ``at`` as far as each text reaches, not the rest
        rest = s.text[at:at + len(text) + 1]
        if rest.lower().startswith(text) and not re.match(r"\w", rest[len(text):len(text) + 1]):
            return Token(at, at + len(text), label=letter, letter=True)
    m = _LOWER_LETTER.match(s.text, at)
    if m and vocab.letter(m.group()) is not None and _LETTER_OK.match(s.text, at + 1):
        return Token(at, at + 1, label=vocab.letter(m.group()), letter=True)
    return None


def _cues(s: Scan, vocab: Vocabulary, lists: frozenset[Token]) -> Iterator[Commitment]:
    """Answer cues and subjects pointing at a label; a cue with nothing but separators before its
    label (``Option C``, ``Answer: True``) only where the label ends its clause (``Option A would…``
    refers to A, it does not choose it).
    """
    for cue in s.tokens:
        # A draft or a revision introduces an answer as a cue does (Initially True; 其实是错).
        is_cue = cue.of("cues") or cue.of("drafts") or cue.of("revisions")
        is_subject = cue.of("subjects")
        if not (is_cue or is_subject) or cue.label is not None:
            continue
        _, sentence_end = s.sentence(cue.end)
        reach = min(sentence_end, cue.end + _CUE_REACH)
        if "\n" in s.text[cue.end:reach] and not _GAP.fullmatch(s.text, cue.end, s.text.index("\n", cue.end)):
            reach = s.text.index("\n", cue.end)
        found = _target(s, vocab, cue, max(reach, cue.end))
        if found is None:
            continue
        target, bare = found
        ends = _ends_clause(s, target) or _ends_clause(s, target, slack=1) and bare \
            or (target.letter and _option_follows(vocab, target, s.text[target.end:target.end + _WINDOW]))
        if is_cue and (ends or not bare or target in lists):
            yield Commitment(str(target.label), "cue", target, cue.start, target in lists)
        elif is_subject and ends and (cue.of("copulas") or any(t.of("copulas")
                                                                 for t in s.within(cue.end, target.start))):
            yield Commitment(str(target.label), "subject", target, cue.start, target in lists)


def _ends_clause(s: Scan, m: Token, slack: int = 0) -> bool:
    """Whether ``m`` ends its clause: punctuation, the end or a reason word follows it (particles
    aside, and up to ``slack`` plain words: ``False here:``).
    """
    pos = s.past_particles(m.end)
    if slack:
        word = _SLACK_WORD.match(s.text, pos)
        if word is None or s.within(pos, word.end()):
            return False
        pos = word.end()
    while pos < len(s.text) and s.text[pos] in _CLOSERS:
        pos += 1
    pos = s.past_particles(pos)  # 「誤り」です, '알 수 없음'입니다
    # A window, not the rest of the text: this runs for every mention (normalised text has no long blanks).
    rest = s.text[pos:pos + _WINDOW]
    if not rest.strip() and not s.text[pos:].strip() or CLAUSE_END.match(rest) or CLAUSE_END.match(rest.lstrip(" \t")):
        return True
    nxt = next(s.after(pos), None)
    return nxt is not None and nxt.of("reasons") and not s.text[pos:nxt.start].strip(" \t\"'")


def _lines(s: Scan, vocab: Vocabulary, lists: frozenset[Token]) -> Iterator[Commitment]:
    text, pos = s.text, 0
    single = "\n" not in text
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        body = line.strip(_AROUND)
        if not body:
            continue
        lead = start + line.index(body[0])
        whole = "whole-answer" if single else "line"
        first = s.mention_at_or_after(start)
        first = first if first is not None and first.start < end else None
        if first is not None and first.start != lead and _only_adverbs(s, lead, first.start):
            lead = first.start  # "Definitely True.", "Yes, B."; "Maybe False." and "Not B." are refused as such
        if first is None or first.start != lead:
            made = _text_or_letter(s, vocab, lead)
            if made is not None and _own_letter_or_nothing(text[made.end:end], str(made.label)):
                yield Commitment(str(made.label), whole, made, lead)
            continue
        if first in lists:
            continue
        after = s.past_particles(first.end)
        rest = text[after:end]
        if not rest.strip(_AROUND):
            yield Commitment(str(first.label), whole, first, lead)
        elif first.letter and _option_follows(vocab, first, rest):
            yield Commitment(str(first.label), whole if _only_option(vocab, first, rest) else "leading", first, lead)
        else:  # anything may follow (True. The…; Verdadero según…): what takes it back is refuse's to find
            yield Commitment(str(first.label), "leading", first, lead)


_ADVERBS = ("affirmations", "hedges", "negations")


def _only_adverbs(s: Scan, start: int, end: int) -> bool:
    """Whether ``[start, end)`` holds separators and words saying how sure a label is only
    (``Definitely``, ``Yes,``, ``Maybe``, ``Not``).
    """
    words = s.within(start, end)
    rest = "".join(s.text[a:b] for a, b in zip([start, *(t.end for t in words)], [*(t.start for t in words), end],
                                                strict=True))
    return bool(words) and all(any(t.of(k) for k in _ADVERBS) for t in words) and not rest.strip(_AROUND)


def _sentences(s: Scan, vocab: Vocabulary, lists: frozenset[Token]) -> Iterator[Commitment]:
    """A sentence within a line opening with a label that ends its clause (``… True or False? False,
    because…``); at a line's start ``_lines`` decides.
    """
    for start, _, _ in s.sentences:
        if start == 0 or s.text[start - 1] == "\n":
            continue
        lead = _LEAD.match(s.text, start).end()  # type: ignore[union-attr]
        first = s.mention_at_or_after(lead)
        if first is not None and first.start == lead and first not in lists and _ends_clause(s, first):
            yield Commitment(str(first.label), "leading", first, lead)


def _colons(s: Scan, vocab: Vocabulary, lists: frozenset[Token]) -> Iterator[Commitment]:
    """A label after a colon that ends its line (``After careful consideration: Unknown.``, ``…, so:
    False``); the clause before the colon is its phrase (``It could be: True`` is hedged).
    """
    pos = 0
    for line in s.text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        colon = max(line.rfind(":"), line.rfind("="), line.rfind("→"))
        if colon <= 0 or not line[:colon].strip(_AROUND):
            continue
        at = start + colon + 1 + len(line[colon + 1:]) - len(line[colon + 1:].lstrip(" \t\"'(「*"))
        first = s.mention_at_or_after(at)
        target = first if first is not None and first.start == at else _text_or_letter(s, vocab, at)
        if target is None or target in lists or s.text[s.past_particles(target.end):end].strip(_AROUND):
            continue
        # The clause before a colon is the label's phrase (It could be: True); before an arrow, what leads to it.
        phrase = start + colon + 1 if line[colon] == "→" else s.clause(start + colon - 1)[0]
        yield Commitment(str(target.label), "colon", target, phrase)


def _own_letter_or_nothing(rest: str, label: str) -> bool:
    """Whether what follows an option's text says nothing, or names its own letter in brackets
    (``for an hour (B)``): another letter there is another answer.
    """
    body = rest.strip(_AROUND)
    return not body or (body.upper() == label.upper()
                        and re.search(rf"[(\[]\s*{re.escape(label)}\s*[)\]]", rest, re.I) is not None)


def _option_follows(vocab: Vocabulary, m: Token, rest: str) -> bool:
    option = dict(vocab.options).get(str(m.label), "").lower()
    body = re.sub(r"^[\s).:\]\-–—]+", "", rest).lower()
    return bool(option) and body.startswith(option) and not re.match(r"\w", body[len(option):len(option) + 1])


def _only_option(vocab: Vocabulary, m: Token, rest: str) -> bool:
    option = dict(vocab.options).get(str(m.label), "").lower()
    body = re.sub(r"^[\s).:\]\-–—]+", "", rest).lower()
    return not body[len(option):].strip(_AROUND)


def _affirmed(s: Scan, lists: frozenset[Token]) -> Iterator[Commitment]:
    """``B is correct``, ``Bが正しい``, ``A fits best``, ``Bを選びます``: a mention, then in its clause
    a copula and an affirmation, or an affirmation right after it.
    """
    for m in s.mentions:
        if m in lists:
            continue
        _, clause_end = s.clause(m.end)
        after = list(islice((t for t in s.iter_within(m.end, clause_end)
                             if t.kinds not in ({"particles"}, {"determiners"})), 2))
        right_after = not s.text[s.past_particles(m.end):after[0].start].strip(" \t\"')]") if after else False
        if len(after) >= 2 and after[0].of("copulas") and affirms(after[1]) and right_after \
                and len(s.text[after[0].end:after[1].start].split()) <= 1:
            yield Commitment(str(m.label), "affirmed", m, m.start)
        elif after and right_after and after[0].of("affirmations") and after[0].label is None:
            yield Commitment(str(m.label), "affirmed", m, m.start)
