"""The reader's last stage: an answer committed to a label is refused when anything in the whole
answer takes the label back. Each check is a function returning its reason's name, or None.

Scopes, for the committed label L and ``p0``, where the answer first commits:

- **the answer's own clause** (from the clause holding its cue to the next punctuation or reason
  word: ``False because he did not finish`` keeps ``False``): a negation, question, hedge,
  condition or judgement in it, a question mark ending it, a copula after L not followed by an
  affirmation (``True is what…``), a contrast after L;
- **the clause right after** L (``True, not really``, ``Wahr: nein``, ``True, but only partly``,
  ``True, maybe``) when it opens with such a word; a sentence opening with a condition
  (``If he finished, the answer is True``);
- **every later mention of L** in the same ways; a mention of another label after ``p0``
  (``True. Or rather False``), unless denied (``not False``, ``A is incorrect``) in a later
  sentence; in the answer's own sentence any other label refuses (``True, not False``);
- **the whole answer**: the speaker's doubt (``not sure``, ``it depends``), per-label verdicts
  (``True: No / False: Yes``), a retraction after ``p0`` (``actually``, ``or rather``, ``不对``),
  a question after ``p0``, a later sentence judging what came before (``That is wrong``) or
  opening with a contrast and hedging (``However, it might…``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import islice

from lingdiag.parse.locate import Commitment
from lingdiag.parse.scan import CLAUSE_END, QUESTION_MARKS, SENTENCE_END, UNSPACED, Scan, Token

_BEFORE = (("negations", "negated"), ("hedges", "hedged"), ("conditions", "conditional"), ("judgements", "judged"))
_AFTER = (*_BEFORE, ("questions", "questioned"), ("contrasts", "contrasted"))
_OPENERS = (("negations", "negated"), ("hedges", "hedged"), ("questions", "questioned"),
            ("conditions", "conditional"), ("contrasts", "contrasted"), ("retractions", "retracted"),
            ("judgements", "judged"))
_VERDICT = re.compile(r"[ \t]*[:=\-–—→][ \t]*")
_CLOSERS = ")]}\"'」』】"
_SHORT = 4
"""Words a clause right after a label may hold for its opening negation to deny the label
(``True, not really``), not to explain it (``Unknown: no information is given about it``)."""


DENIALS = ("negated", "judged", "questioned")
"""What makes a commitment a denial rather than an answer: ``(A) is incorrect`` after ``B`` is
no second answer; alone, it is refused with that reason."""


def refusal(s: Scan, commitments: Sequence[Commitment], lists: frozenset[Token]) \
        -> tuple[str | None, list[Commitment]]:
    """Why the committed answer is refused (None: it is not), and the commitments that stand (the
    module's checks, in order).
    """
    if any(c.listed for c in commitments):
        return "several-labels", []
    verdict = verdicts(s)
    if verdict is not None:
        return verdict, []
    own = {c: local(s, c.mention, c.start) for c in commitments}
    kept = [c for c in commitments if own[c] not in DENIALS]
    if not kept:
        return own[commitments[0]], []
    # A mention some phrase commits to cleanly is committed: its other phrases' denials are no answer.
    clean = {c.mention for c in kept if own[c] is None}
    kept = [c for c in kept if own[c] is None or c.mention not in clean]
    checks: tuple[Callable[[], str | None], ...] = (
        lambda: "several-answers" if len({c.label for c in kept}) > 1 else None,
        lambda: "doubted" if s.doubted else None,
        lambda: next((own[c] for c in kept if own[c] is not None), None),
        lambda: _taken_back(s, kept, lists),
        lambda: _other_labels(s, kept, lists),
        lambda: _later(s, min(c.mention.start for c in kept)),
    )
    return next((reason for check in checks if (reason := check()) is not None), None), kept


def verdicts(s: Scan) -> str | None:
    """``True: No``, ``A - incorrect``, ``Wahr: nein``: a label given a verdict of its own."""
    return "verdicts" if any(verdict(s, m) is not None for m in s.mentions) else None


def verdict(s: Scan, m: Token) -> Token | None:
    """The verdict the mention ``m`` is given (``True: No``, ``A - incorrect``): a separator, then an
    affirmation, negation or judgement alone in its clause; None if none.
    """
    sep = _VERDICT.match(s.text, s.past_particles(m.end))
    if sep is None or sep.end() == m.end:
        return None
    word = next((t for t in s.after(sep.end()) if t.start == sep.end()), None) if sep.end() < len(s.text) else None
    if word is not None and word.label is None and any(word.of(k) for k in ("affirmations", "negations",
                                                                               "judgements")):
        rest = s.text[word.end:s.clause(word.end)[1]] if word.end < len(s.text) else ""
        if not rest.strip(" \t\"'") or "\n" in rest:
            return word
    return None


def _in(s: Scan, start: int, end: int, kinds: Sequence[tuple[str, str]], negations_from: int | None = None) \
        -> str | None:
    """The reason of the first word within ``[start, end)`` of one of ``kinds`` (a word of several:
    the first kind listed); negations counted from ``negations_from`` on where given.
    """
    best: tuple[Token, str] | None = None
    for kind, reason in kinds:
        t = s.first_of(kind, negations_from if kind == "negations" and negations_from is not None else start, end)
        if t is not None and (best is None or t.start < best[0].start):
            best = (t, reason)
    return None if best is None else best[1]


def _clause_after(s: Scan, m: Token) -> tuple[int, int]:
    """The rest of ``m``'s clause, to the first reason word (closing brackets and quotes around
    ``m`` are its own: ``(A) is incorrect``).
    """
    start = s.past_particles(m.end)
    while start < len(s.text) and s.text[start] in _CLOSERS:
        start += 1
    _, end = s.clause(start if start < len(s.text) else m.end)
    end = max(end, start)
    reason = s.first_of("reasons", start, end)
    return start, reason.start if reason else end


def _judged_copula(s: Scan, start: int, end: int) -> bool:
    """``True is what…``, ``False would be a stretch``: a copula right after a label, no affirmation."""
    first = next(s.iter_within(start, end), None)
    if first is None or not first.of("copulas") or s.text[start:first.start].strip(" \t\"')]"):
        return False
    return s.first_of("affirmations", first.end, end) is None and s.first_of("cues", first.end, end) is None


def _opening(s: Scan, end: int) -> str | None:
    """What the clause right after a label's clause opens with, when it takes the label back; past
    other labels struck out in clauses of their own (``True, not False, probably.`` is hedged).
    """
    while True:
        if end >= len(s.text) or SENTENCE_END.match(s.text, end):
            return None
        nxt_start = CLAUSE_END.match(s.text, end)
        pos = nxt_start.end() if nxt_start else end
        while pos < len(s.text) and s.text[pos] in " \t\"'":
            pos += 1
        hedged = _short_hedge(s, pos)
        if hedged is not None:
            return hedged
        following = s.after(pos)
        first = next(following, None)
        while first is not None and first.of("cues") and first.label is None:  # "Wahr, also vielleicht"
            nxt = next(following, None)
            if nxt is None or s.text[first.end:nxt.start].strip():
                break
            pos, first = nxt.start, nxt
        if first is None or first.start != pos or first.label is not None:
            return None
        reason = next((r for k, r in _OPENERS if first.of(k)), None)
        if reason != "negated":
            return reason
        _, clause_end = s.clause(first.end)
        after = s.text[first.end:clause_end]
        nxt = next((t for t in s.after(first.end) if t.start < clause_end), None)
        if nxt is not None and nxt.label is not None:
            if s.text[nxt.end:clause_end].strip(" \t\"')]") or clause_end <= end:
                return None
            end = clause_end  # a strike ("not False"): the clause after it still speaks of the answer
            continue
        return None if len(after.split()) > _SHORT else reason


def _short_hedge(s: Scan, pos: int) -> str | None:
    """A short clause at ``pos`` (no label, no reason opening it) hedging, questioning or judging
    what came before anywhere in it (``True, so maybe.``, ``True, I guess.``).
    """
    if pos >= len(s.text):
        return None
    _, clause_end = s.clause(pos)
    label = s.mention_at_or_after(pos)
    first = next(s.iter_within(pos, clause_end), None)
    if len(s.text[pos:clause_end].split()) > _SHORT or (label is not None and label.start < clause_end) \
            or (first is not None and first.of("reasons")):
        return None
    return _in(s, pos, clause_end, _OPENERS[1:])


def local(s: Scan, m: Token, start: int) -> str | None:
    """What takes the mention ``m`` back where it stands (its phrase beginning at ``start``): its
    clause before and after it, a sentence opening with a condition, the clause right after it.
    """
    clause_start, _ = s.clause(start)
    a, b = _clause_after(s, m)
    before = _in(s, clause_start, m.start, _BEFORE, _unspent(s, clause_start, m))
    if before is not None:
        return before
    if _in(s, clause_start, start, (("questions", "questioned"),)):
        return "questioned"
    if _conditioned(s, start):
        return "conditional"
    if _hedged_before(s, start):
        return "hedged"
    after = _in(s, a, b, _AFTER)
    if after is not None:
        return after
    if _judged_copula(s, a, b):
        return "judged"
    if s.text[b:b + 1] in QUESTION_MARKS and not any(t.of("reasons") for t in s.within(b, b + 1)):
        return "questioned"
    if _asks(s.sentence_mark(m.start)):
        return "questioned"  # "D: by tomorrow? No, C."
    return _opening(s, b)


def _hedged_before(s: Scan, start: int) -> bool:
    """Whether the clause right before ``start``'s, in its sentence, is a short one hedging what follows
    (``Probably, the answer is Unknown``; ``Vielleicht, …``), naming no label itself.
    """
    sentence_start, _ = s.sentence(start)
    clause_start, _ = s.clause(start)
    if clause_start <= sentence_start:
        return False
    a, b = s.clause(clause_start - 1)
    label = s.mention_at_or_after(a)
    return a >= sentence_start and len(s.text[a:b].split()) <= _SHORT and (label is None or label.start >= b) \
        and s.first_of("hedges", a, b) is not None


def _unspent(s: Scan, start: int, m: Token) -> int:
    """Where the negations before ``m`` that no other label takes first begin (from ``start``):
    ``neither True nor False: Unknown`` denies True and False, not Unknown.
    """
    other = s.last_other_before(m)
    return max(start, other.end) if other is not None else start


def _asks(mark: str) -> bool:
    """Whether a sentence's closing mark asks (``?``, ``?!``, ``？``, ``؟``: ``QUESTION_MARKS``)."""
    return any(c in QUESTION_MARKS for c in mark)


def _conditioned(s: Scan, start: int) -> bool:
    """Whether a clause of the sentence before ``start``'s clause is a condition: one opening or
    closing with a condition word (``If he finished, …``, ``家が完成したなら、…``).
    """
    sentence_start, _ = s.sentence(start)
    clause_start, _ = s.clause(start)
    starts = s.condition_clauses
    k = bisect_left(starts, sentence_start)
    return k < len(starts) and starts[k] < clause_start


def _taken_back(s: Scan, commitments: Sequence[Commitment], lists: frozenset[Token]) -> str | None:
    """A mention of the answer other than its commitments that takes it back: before the first
    commitment only a denial counts (reasoning may question a label it then gives).
    """
    label = commitments[0].label
    p0 = min(c.mention.start for c in commitments)
    committed = {c.mention for c in commitments}
    for m in s.mentions:
        if m.label != label or m in committed:
            continue
        if m.start < p0:  # a denied list before the answer denies it too (Neither True nor False. True.)
            clause_start, _ = s.clause(m.start)
            a, b = _clause_after(s, m)
            if _in(s, clause_start, m.start, _BEFORE[:1]) or _in(s, a, b, _BEFORE[:1]):
                return "negated"
            continue
        if m in lists:
            continue
        reason = local(s, m, m.start)
        if reason is not None:
            return reason
    return None


def denied(s: Scan, m: Token) -> bool:
    """Whether ``m`` is denied or judged wrong where it stands (``not False``, ``A is incorrect``), and
    not offered as well (``maybe A``, ``A might not be wrong``).
    """
    clause_start, clause_end = s.clause(m.start)
    if _in(s, clause_start, clause_end, (("hedges", "x"), ("affirmations", "x"))):
        return False
    if _in(s, clause_start, m.start, (("negations", "x"),)):
        return True
    a, b = _clause_after(s, m)
    negation = s.first_of("negations", a, b)
    if negation is not None and s.first_of("judgements", negation.end, b) is not None:
        return False  # "A is not wrong", "A cannot be ruled out": a double negation offers A
    return _in(s, a, b, (("negations", "x"), ("judgements", "x"), ("questions", "x"))) is not None


def _struck(s: Scan, m: Token) -> bool:
    """Whether ``m`` is struck out in a clause of its own: a negation and ``m``, nothing else worded
    (``True, not False.``; ``B, not A``; ``Wahr, nicht falsch``).
    """
    start, end = s.clause(m.start)
    words = list(islice((t for t in s.iter_within(start, end) if t is not m), 2))
    if len(words) != 1 or not words[0].of("negations") or words[0].end > m.start:
        return False
    rest = s.text[start:words[0].start] + s.text[words[0].end:m.start] + s.text[m.end:end]
    return not any(c.isalnum() for c in rest)


def _reasoned(s: Scan, p0: int, m: Token) -> bool:
    """Whether ``m`` stands in a reason given for the answer at ``p0`` (``B because A is wrong``): a
    reason word between them in one sentence.
    """
    start, _ = s.sentence(m.start)
    return s.first_of("reasons", max(p0, start), m.start) is not None


def _other_labels(s: Scan, commitments: Sequence[Commitment], lists: frozenset[Token]) -> str | None:
    """Another label after the answer, not denied where it stands; in the answer's sentence a denied
    one too, unless struck out in a clause of its own (``True, not False``) or denied in a reason given
    for the answer (``B because A is wrong``). A list naming the answer after it offers
    another (``B. Either A or B could work``); one of other labels only is reasoning (``Unknown: it
    could be true or false``).
    """
    label = commitments[0].label
    p0 = min(c.mention.start for c in commitments)
    sentences = {s.sentence(c.mention.start) for c in commitments}
    if any(m.label == label and m.start > p0 for m in lists):
        return "several-labels"
    for m in s.mentions:
        if m.label == label or m in lists or m.start < p0:
            continue
        if not denied(s, m) or (s.sentence(m.start) in sentences and not _struck(s, m)
                                 and not _reasoned(s, p0, m)):
            return "another-label"
    return None


def _later(s: Scan, p0: int) -> str | None:
    """Retractions, questions, judgements of what came before and hedged contrasts after ``p0``."""
    for t in s.of_kind("retractions"):
        if t.start >= p0 and (" " in s.text[t.start:t.end] or UNSPACED.match(s.text[t.start])
                                    or not s.text[s.clause(t.start)[0]:t.start].strip(" \t\"'")):
            return "retracted"
    _, first_end = s.sentence(p0)
    for start, end, mark in s.sentences:
        if start <= first_end or not s.text[start:end].strip():
            continue
        if _asks(mark):
            return "questioned"
        tokens = s.within(start, end)
        if not tokens or s.text[start:tokens[0].start].strip(" \t\"'"):
            continue
        if len(tokens) == 1 and tokens[0].of("negations") and not s.text[tokens[0].end:end].strip(" \t\"'"):
            return "retracted"  # "True. No.": a sentence that only says no takes the answer back
        if len(tokens) >= 3 and tokens[0].of("subjects") and tokens[1].of("copulas") \
                and any(t.of("judgements") for t in tokens[2:]):
            return "judged"
        if tokens[0].of("contrasts") and any(t.of("hedges") or t.of("doubts") for t in tokens[1:]):
            return "contrasted"
    return None
