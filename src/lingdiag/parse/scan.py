"""An answer's text as tokens: each mention of a label (a label word, an alias, a choice letter)
and each word of a kind the language declares, with the text's sentences and clauses.

A label or word is found by its own edges, not by English word boundaries: an edge in a script
written without spaces (Han, kana, Thai) needs no boundary before it, and a label ending in one
must be followed by punctuation, a space, the end or one of the language's ``particles`` (so
``对不起`` does not name ``对``); a Latin edge needs a word boundary (``Truely`` is not ``True``).
Where a label and a word overlap, the longer wins and a label wins a tie: ``不对`` is the
retraction, not a mention of ``对``; ``不确定`` given as a label is the label.

A choice letter is a mention where it stands as a letter, not as a word: ``(A)``, ``A)``, ``A.``,
``A:``, a lone ``A``, ``A`` before the option's text or before a word that says something of it
(``A is correct``, ``A or B``); the article of ``A bit ambiguous`` is none, nor a letter a plain
word of four letters or more names (``Sentence A``, ``event B``) unless it marks an option
(``B)``). A lower-case letter is one only in parentheses or before ``)`` (``(b)``, ``b)``); after
an answer cue or alone the reader locates it itself (``lingdiag.parse.locate``).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property, lru_cache
from typing import Any

from lingdiag.parse.language import PUNCTUATION, AnswerLanguage, inflected

UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
"""Letters of scripts written without spaces between words (Thai, kana, Han): no word boundary there."""
KINDS = tuple(f.name for f in fields(AnswerLanguage) if f.name != "code")

_WORD_LETTERS = frozenset("AIOEYU")
"""Capitals that are also words (English *A*, *I*; Spanish *O*, *Y*, *E*, *U*): a letter only where
no lower-case word follows them, or one that says something of a letter."""
_LETTER_AFTER = re.compile(r"[ \t]+([^\W\d_][\w'-]*)")
_WORD_BEFORE = re.compile(r"(?<![\w'-])([A-Za-z][A-Za-z'-]+)[ \t]+$")
_SCRIPTS_SENTENCE = "".join(p.sentence for p in PUNCTUATION if p.script != "Latin")
SENTENCE_END = re.compile(r"\n|[!?]+(?![A-Za-z0-9])|(?<!\.)(?<!\.\w)\.(?![.A-Za-z0-9])|["
                          + re.escape(_SCRIPTS_SENTENCE) + "]+")
"""Where a sentence ends: a line end, a full stop, exclamation or question mark of any script the
reader knows (``PUNCTUATION``; an ellipsis, a decimal point and the dot of ``e.g`` end none)."""
CLAUSE_END = re.compile(SENTENCE_END.pattern + "|[" + re.escape("".join(p.clause for p in PUNCTUATION))
                        + r"()（）\[\]→]|\s[-–—]+\s|[–—―─]")
"""Where a clause ends: a sentence end, a comma, semicolon or colon of any script, a parenthesis, dash
or arrow (what stands before an arrow leads to what follows it: ``no completion stated → Unknown``)."""
QUESTION_MARKS = frozenset("".join(p.question for p in PUNCTUATION))
"""The marks that ask, in every script the reader knows."""
MARKS = "".join(p.sentence + p.clause for p in PUNCTUATION)
"""Every script's sentence and clause marks (what may stand around a label)."""


@dataclass(frozen=True)
class Vocabulary:
    """What an answer may name: labels (with their surface forms) or choice letters (with their options)."""

    surfaces: tuple[tuple[str, str], ...] = ()
    """(surface form, label): every label and alias, normalised and lower-cased, longest first."""
    options: tuple[tuple[str, str], ...] = ()
    """(letter, option text): the choice letters, as the prompt lists them (texts may be empty)."""
    json_key: str = "label"
    """The key of a JSON answer holding the label."""

    @classmethod
    def of_labels(cls, labels: Sequence[str], aliases: Mapping[str, str] | None = None,
                  json_key: str = "label") -> Vocabulary:
        """A label vocabulary; a label that is one Latin letter (``A``) is read as a choice letter."""
        forms = {**{lab: lab for lab in labels}, **dict(aliases or {})}
        letters = tuple((lab, "") for lab in labels if _is_letter(lab))
        words = {_form(s): lab for s, lab in forms.items() if not _is_letter(s) and _form(s)}
        return cls(tuple(sorted(words.items(), key=lambda kv: (-len(kv[0]), kv[0]))), letters, json_key)

    @classmethod
    def of_options(cls, options: Mapping[str, str]) -> Vocabulary:
        """A choice vocabulary: letter → option text (``{"A": "then", "B": "so"}``)."""
        return cls((), tuple((k, str(v)) for k, v in options.items()))

    def inflected(self, code: str) -> Vocabulary:
        """This vocabulary with the inflected forms of the words declared for its labels (aliases) in
        the built-in language ``code`` (``language.inflected``): a form another label word has, or two
        label words share, is left out.
        """
        return _inflected(self, code)

    def letter(self, text: str) -> str | None:
        """The letter ``text`` is (any case), or None."""
        return next((k for k, _ in self.options if k.lower() == text.lower()), None)

    @cached_property
    def longest_texts(self) -> tuple[tuple[str, str], ...]:
        """``texts`` as (text, letter), longest text first."""
        return tuple(sorted(self.texts.items(), key=lambda kv: (-len(kv[0]), kv[0])))

    @cached_property
    def texts(self) -> dict[str, str]:
        """Option text (normalised, lower-cased) → its letter; texts given twice name no letter."""
        seen: dict[str, list[str]] = {}
        for k, v in self.options:
            if _form(v):
                seen.setdefault(_form(v), []).append(k)
        return {t: ks[0] for t, ks in seen.items() if len(ks) == 1}


@lru_cache(maxsize=256)
def _inflected(vocab: Vocabulary, code: str) -> Vocabulary:
    given = dict(vocab.surfaces)
    made: dict[str, set[str]] = {}
    for surface, label in vocab.surfaces:
        if surface == _form(label):
            continue  # a label's own name (True) is no word of the language's: only the words declared for it
        for form in inflected(code, surface):
            made.setdefault(form, set()).add(label)
    more = {form: labels.pop() for form, labels in made.items() if len(labels) == 1 and form not in given}
    if not more:
        return vocab
    surfaces = sorted({**given, **more}.items(), key=lambda kv: (-len(kv[0]), kv[0]))
    return replace(vocab, surfaces=tuple(surfaces))


def _form(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).strip(" \"'").lower()


def _is_letter(text: str) -> bool:
    return len(text) == 1 and "a" <= text.lower() <= "z"


@dataclass(frozen=True, slots=True)
class Token:
    """A label mention or a declared word, where it stands in the text."""

    start: int
    end: int
    label: str | None = None
    """The label a mention names (None: a word)."""
    kinds: frozenset[str] = frozenset()
    """The kinds of a word (``negations``, ``cues`` …); several where a word has several jobs."""
    letter: bool = False
    """A mention by its choice letter."""

    def of(self, kind: str) -> bool:
        """Whether this is a word of ``kind``."""
        return kind in self.kinds


def affirms(t: Token) -> bool:
    """Whether ``t`` confirms the label before it: an affirmation, or a cue (``B is the answer``)."""
    return t.label is None and (t.of("affirmations") or t.of("cues"))


def _tail(form: str, followers: Sequence[str] | None) -> str:
    """What must follow ``form`` (a lookahead), bounded where its script needs it (the module's
    rule); ``followers`` given (a label), an edge in an unspaced script is bounded too.
    """
    if UNSPACED.match(form[-1:]):
        if followers is None:
            return ""
        return r"(?=$|[^\w]" + "".join("|" + re.escape(p) for p in followers) + ")"
    if form[-1:].isalnum():
        if not followers:
            return r"(?![\w-])"
        # A follower of a spaced script ends its word (참이 is 참 and a particle; 참가자 names no 참).
        return r"(?=$|[^\w-]" + "".join("|" + re.escape(p) + ("" if UNSPACED.match(p[-1:]) else r"(?![\w-])")
                                        for p in followers) + ")"
    return ""


def _trie(tails: Mapping[str, str]) -> str:
    """One regex for the forms of ``tails`` (form → what must follow it), as a trie: at each
    position only the branches of the next character are tried, the longest form first.
    """
    root: dict[str, Any] = {}
    for form, tail in tails.items():
        node = root
        for ch in form:
            node = node.setdefault(ch, {})
        node[""] = tail  # no character is empty: the key of a form ending here

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if "" in node:
            branches.append(node[""])  # shorter after longer: the longest form wins
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(root) if root else r"(?!x)x"


@lru_cache(maxsize=512)
def _pattern(vocab: Vocabulary, words: AnswerLanguage) -> tuple[re.Pattern[str], dict[str, str | frozenset[str]]]:
    """One regex for every label form and every word, longest first, and form → label or kinds."""
    table: dict[str, str | frozenset[str]] = {}
    kinds_of: dict[str, set[str]] = {}
    for kind in KINDS:
        for w in getattr(words, kind):
            kinds_of.setdefault(_form(w), set()).add(kind)
    for w, ks in kinds_of.items():
        if w:
            table[w] = frozenset(ks)
    for s, lab in vocab.surfaces:  # a label wins a tie with a word
        table[s] = lab
    # A label in an unspaced script must end before punctuation, a space, the end, a particle or a
    # word of the language's (誤りかも, 对还是错: a hedge, a joiner); a particle closes the word
    # before it, so nothing bounds its start.
    followers = sorted({*(_form(p) for p in words.particles), *(w for w in kinds_of if UNSPACED.match(w[:1]))},
                       key=lambda w: (-len(w), w))
    # A word of a spaced script takes the particles of spaced scripts too (Korean 정답은, 답이): a suite
    # that declares them reads them after a cue as after a label.
    particles = sorted({_form(p) for p in words.particles if not UNSPACED.match(_form(p)[-1:])},
                       key=lambda w: (-len(w), w))
    bounded: dict[str, str] = {}
    free: dict[str, str] = {}
    for form, value in table.items():
        tail = _tail(form, followers if isinstance(value, str) else None if UNSPACED.match(form[-1:]) else particles)
        starts_word = not UNSPACED.match(form[:1]) and (form[:1].isalnum() or form[:1] == "_")
        particle = isinstance(value, frozenset) and value == frozenset({"particles"})
        (bounded if starts_word and not particle else free)[form] = tail
    pattern = r"(?<![\w-])" + _trie(bounded) + "|" + _trie(free)
    return re.compile(pattern, re.I), table


@dataclass(frozen=True)
class Scan:
    """An answer's normalised text and its tokens, in order (none overlaps another)."""

    text: str
    tokens: tuple[Token, ...]

    @cached_property
    def _starts(self) -> list[int]:
        return [t.start for t in self.tokens]

    @cached_property
    def mentions(self) -> tuple[Token, ...]:
        """Every label mention, in order."""
        return tuple(t for t in self.tokens if t.label is not None)

    @cached_property
    def doubted(self) -> bool:
        """Whether the speaker's doubt is anywhere in the text (``not sure``)."""
        return any(t.of("doubts") for t in self.tokens)

    @cached_property
    def _mention_starts(self) -> list[int]:
        return [t.start for t in self.mentions]

    def within(self, start: int, end: int) -> list[Token]:
        """The tokens within ``[start, end)``."""
        return list(self.iter_within(start, end))

    def iter_within(self, start: int, end: int) -> Iterator[Token]:
        """The tokens within ``[start, end)``, one at a time (a caller that needs the first few of a long
        clause reads only those).
        """
        # Indices, not a slice: a slice copies every token after ``start`` on each call, which made a
        # reading quadratic in its mentions (8,000 of them took 10-13 s).
        tokens = self.tokens
        for k in range(bisect_left(self._starts, start), len(tokens)):
            t = tokens[k]
            if t.start >= end:
                break
            if t.end <= end:
                yield t

    @cached_property
    def _kinds(self) -> dict[str, tuple[list[int], list[Token]]]:
        by_kind: dict[str, tuple[list[int], list[Token]]] = {}
        for t in self.tokens:
            for kind in t.kinds:
                starts, tokens = by_kind.setdefault(kind, ([], []))
                starts.append(t.start)
                tokens.append(t)
        return by_kind

    def of_kind(self, kind: str) -> list[Token]:
        """The words of ``kind``, in order."""
        return self._kinds.get(kind, ([], []))[1]

    def first_of(self, kind: str, start: int, end: int) -> Token | None:
        """The first word of ``kind`` within ``[start, end)``: a lookup, not a walk over the clause, so
        that checking every mention of a long clause stays linear.
        """
        starts, tokens = self._kinds.get(kind, ([], []))
        k = bisect_left(starts, start)
        # Tokens do not overlap: the first one starting in range is within it unless it is the last one.
        return tokens[k] if k < len(tokens) and tokens[k].start < end and tokens[k].end <= end else None

    def last_other_before(self, m: Token) -> Token | None:
        """The last mention before ``m`` naming another label than ``m``'s."""
        k = bisect_left(self._mention_starts, m.start)
        j = self._other_before[k] if k < len(self.mentions) else -1
        return self.mentions[j] if j >= 0 else None

    @cached_property
    def _other_before(self) -> list[int]:
        """For each mention, the index of the last mention before it naming another label (-1: none)."""
        out, last, last_of = [], -1, -1  # last: the previous mention; last_of: the last before it of another label
        for k, t in enumerate(self.mentions):
            if last >= 0 and self.mentions[last].label != t.label:
                last_of = last
            out.append(last_of)
            last = k
        return out

    def after(self, pos: int) -> Iterator[Token]:
        """The tokens starting at or after ``pos``."""
        tokens = self.tokens
        return (tokens[k] for k in range(bisect_left(self._starts, pos), len(tokens)))

    def mention_at_or_after(self, pos: int) -> Token | None:
        """The first label mention starting at or after ``pos``."""
        k = bisect_left(self._mention_starts, pos)
        return self.mentions[k] if k < len(self.mentions) else None

    def past_particles(self, pos: int) -> int:
        """``pos`` moved past the particles that stand right there (``です``, ``的``)."""
        for t in self.after(pos):
            if t.start != pos or t.kinds != {"particles"}:
                break
            pos = t.end
        return pos

    @cached_property
    def sentences(self) -> tuple[tuple[int, int, str], ...]:
        """Each sentence's ``(start, end, closing mark)``, the mark empty at a line's or the text's end."""
        return _spans(SENTENCE_END, self.text)

    @cached_property
    def clauses(self) -> tuple[tuple[int, int, str], ...]:
        """Each clause's ``(start, end, closing mark)``."""
        return _spans(CLAUSE_END, self.text)

    @cached_property
    def _sentence_ends(self) -> list[int]:
        return [end for _, end, _ in self.sentences]

    @cached_property
    def _clause_ends(self) -> list[int]:
        return [end for _, end, _ in self.clauses]

    def sentence(self, pos: int) -> tuple[int, int]:
        """The ``[start, end)`` of the sentence holding ``pos``."""
        return _holding(self.sentences, self._sentence_ends, pos)

    def sentence_mark(self, pos: int) -> str:
        """The mark closing the sentence holding ``pos`` (``?``, ``.``, ``?!``; empty at a line's end)."""
        k = min(bisect_left(self._sentence_ends, pos), len(self.sentences) - 1)
        return self.sentences[k][2]

    def clause(self, pos: int) -> tuple[int, int]:
        """The ``[start, end)`` of the clause holding ``pos``."""
        return _holding(self.clauses, self._clause_ends, pos)

    @cached_property
    def condition_clauses(self) -> list[int]:
        """Where each clause that opens or closes with a condition word starts (``If he finished, …``,
        ``家が完成したなら、…``), in order.
        """
        starts = []
        for a, b, _ in self.clauses:
            words = [t for t in self.within(a, b) if t.kinds != {"particles"}]
            if words and ((words[0].of("conditions") and not self.text[a:words[0].start].strip(" \t\"'"))
                          or (words[-1].of("conditions") and not self.text[words[-1].end:b].strip(" \t\"'"))):
                starts.append(a)
        return starts


def _spans(ends: re.Pattern[str], text: str) -> tuple[tuple[int, int, str], ...]:
    spans, start = [], 0
    for m in ends.finditer(text):
        spans.append((start, m.start(), m.group().strip() or "\n"))
        start = m.end()
    spans.append((start, len(text), ""))
    return tuple(spans)


def _holding(spans: Sequence[tuple[int, int, str]], ends: Sequence[int], pos: int) -> tuple[int, int]:
    k = min(bisect_left(ends, pos), len(spans) - 1)
    return spans[k][0], spans[k][1]


def scan(text: str, vocab: Vocabulary, words: AnswerLanguage) -> Scan:
    """The tokens of the normalised ``text``: labels, letters and words (the module's rules)."""
    pattern, table = _pattern(vocab, words)
    tokens = []
    for m in pattern.finditer(text):
        value = table.get(_form(m.group()))
        if value is None:
            continue
        if isinstance(value, str):
            tokens.append(Token(m.start(), m.end(), label=value))
        else:
            tokens.append(Token(m.start(), m.end(), kinds=value))
    tokens = [t for k, t in enumerate(tokens) if not _attributive(text, k, tokens)]
    if vocab.options:
        ends = {t.end for t in tokens}
        letters = []
        for t in _letters(text, vocab, table):
            before = _WORD_BEFORE.search(text, max(0, t.start - 40), t.start)
            # "Sentence A", "event B": a letter a plain word names is no answer; "is A", "or B", "Option C",
            # "la C" (an article) and an option marker ("… hour B) for an hour") are.
            if before is not None and before.end(1) not in ends and len(before.group(1)) > 3 \
                    and text[t.end:t.end + 1] != ")":
                continue
            letters.append(t)
        # A letter standing as one is no word of one letter (the determiner "a", the joiner "y").
        spans = {(t.start, t.end) for t in letters}
        tokens = [t for t in tokens if (t.start, t.end) not in spans]
        # Words do not overlap: the last one starting before a letter's end is the only one that may overlap it.
        word_starts, word_ends = [t.start for t in tokens], [t.end for t in tokens]
        tokens += [t for t in letters
                   if (k := bisect_left(word_starts, t.end)) == 0 or word_ends[k - 1] <= t.start]
    return Scan(text, tuple(sorted(tokens, key=lambda t: (t.start, t.end))))


_NEXT_WORD = re.compile(r"[ \t]+[^\W\d_]")


def _attributive(text: str, k: int, tokens: Sequence[Token]) -> bool:
    """Whether the label word ``tokens[k]`` stands between a determiner and a plain word (``an
    unknown person``): an adjective there, no label.
    """
    t = tokens[k]
    nxt_word = _NEXT_WORD.match(text, t.end)
    if t.label is None or nxt_word is None or k == 0:
        return False
    before = tokens[k - 1]
    if not before.of("determiners") or text[before.end:t.start].strip():
        return False
    return k + 1 >= len(tokens) or tokens[k + 1].start != nxt_word.end() - 1


def _letters(text: str, vocab: Vocabulary, table: Mapping[str, str | frozenset[str]]) -> Iterator[Token]:
    """The choice-letter mentions of ``text`` (the module's rules)."""
    for k, _ in vocab.options:
        for m in re.finditer(rf"(?<![A-Za-z0-9'’]){re.escape(k.upper())}(?![A-Za-z0-9]|['’][a-z])|"
                             rf"(?<=[(\[]){re.escape(k.lower())}(?=[)\]])|"
                             rf"(?<![A-Za-z0-9'’(\[]){re.escape(k.lower())}(?=\))", text):
            if m.group().isupper() and m.group() in _WORD_LETTERS and not _says_of_letter(text, m.end(), vocab,
                                                                                             table, k):
                continue
            yield Token(m.start(), m.end(), label=k, letter=True)


_OF_LETTER = ("copulas", "judgements", "affirmations", "reasons", "negations", "hedges", "contrasts", "joiners")


def _says_of_letter(text: str, end: int, vocab: Vocabulary, table: Mapping[str, str | frozenset[str]],
                    letter: str) -> bool:
    """Whether a capital that is also a word stands as a letter: no lower-case word after it, or one
    that says something of a letter (``A is``, ``A or``) or begins its option's text.
    """
    m = _LETTER_AFTER.match(text, end)
    if m is None or not m.group(1)[:1].islower():
        return True
    option = _form(dict(vocab.options).get(letter, ""))
    if option and text[m.start(1):m.start(1) + len(option) + 1].lower().startswith(option):
        return True
    word = m.group(1).lower()
    # An elided word counts by its elision too: "A n'est pas…" says something of A.
    kinds = table.get(word) or (table.get(_form(word[:word.index("'") + 1])) if "'" in word else None)
    return isinstance(kinds, frozenset) and any(k in kinds for k in _OF_LETTER)
