r"""The answer reader: a model's free answer → the label it commits to, or ``UNPARSED`` with the
reason it was refused. One design for label vocabularies (``True``/``False``/``Unknown``, with
aliases in the prompt's language) and choice letters (``A``-``D`` with their options' texts), in
every built-in and declared language.

The stages, each a function with its own tests:

1. **json** (:func:`json_answer`): a JSON object's label (``{"label": "False"}``) becomes a
   final-answer line; other keys become ``key: value`` lines;
2. **normalise** (``lingdiag.parse.normalise``): NFKC, Markdown, LaTeX ``\boxed{}``, quotes,
   end-of-turn tokens, contractions; a cue-only line joined to the next;
3. **scan** (``lingdiag.parse.scan``): label mentions, choice letters and the language's words;
4. **echo** (``lingdiag.parse.echo``): lists of labels or options marked, an invented next item cut;
5. **locate** (``lingdiag.parse.locate``): where the answer commits to a label (the ``rule``);
6. **refuse** (``lingdiag.parse.refuse``): whatever in the whole answer takes it back (the reason);
7. **weigh** (``lingdiag.parse.weigh``): a refused answer whose final answer follows a discussion of
   the labels committing to nothing else is that answer (rule ``weighed``); a read one whose
   discussion took another label is refused.

A record of a parsed answer names its rule (``detail["rule"]``); of an unparsed one its reason
(``detail["unparsed"]``, one of ``REASONS``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lingdiag.parse import echo, weigh
from lingdiag.parse.language import ENGLISH, AnswerLanguage, reading_words
from lingdiag.parse.locate import RULE_ORDER, Commitment, locate
from lingdiag.parse.normalise import normalise
from lingdiag.parse.refuse import refusal, verdicts
from lingdiag.parse.revise import Revision, revised, revision_start
from lingdiag.parse.scan import Scan, Vocabulary, scan
from lingdiag.records import UNPARSED, UNPARSED_REASON

RULES: Mapping[str, str] = {
    "json": "the label of a JSON answer's label key",
    "cue": "an answer cue, a copula or colon, the label (Answer: True; Option C; 答案是对)",
    "subject": "what may be said to be a label, a copula, the label ending its clause (The hypothesis is true.)",
    "whole-answer": "the answer is a label, a letter, a letter and its option, or an option's text",
    "line": "a line of the answer is a label, a letter, a letter and its option, or an option's text",
    "leading": "a line opens with the label and punctuation or a word saying something of it (True. The…)",
    "affirmed": "a label, a copula and an affirmation (B is correct)",
    "colon": "a label after a colon, ending its line (After careful consideration: Unknown.)",
    "weighed": "a final answer after a discussion of the labels that commits to no other (True: no. False: no. "
               "Answer: Unknown; A and C do not fit, which leaves B)",
    "revision": "the answer's last revision (True. Actually, False.; Initial answer … Final answer); the label it "
                "superseded is the detail's superseded",
}
"""How a label was located: a parsed record's ``detail["rule"]``."""

REASONS: Mapping[str, str] = {
    "empty": "the answer holds no text",
    "no-answer": "the answer commits to no label",
    "echoed-list": "the answer lists labels or options (an echo of the prompt) and commits to none",
    "several-labels": "an answer cue points at several labels (Answer: B or C)",
    "several-answers": "the answer commits to different labels",
    "verdicts": "labels given verdicts of their own (True: No / False: Yes)",
    "doubted": "the answer doubts itself (not sure, it depends)",
    "negated": "the label is denied (not True; True, not really; Wahr: nein)",
    "questioned": "the label is questioned (True?; whether it is True)",
    "hedged": "the label is hedged (maybe True; True seems…)",
    "conditional": "the label holds only under a condition (True only if…)",
    "contrasted": "the label is qualified (True, but only partly)",
    "judged": "the label is judged (True is incorrect; True seems unlikely)",
    "retracted": "the answer takes itself back (actually, or rather, 不对)",
    "another-label": "another label follows the answer",
}
"""Why an answer was refused: an unparsed record's ``detail["unparsed"]``."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader made of one answer."""

    label: str
    """A label of the vocabulary, or ``UNPARSED``."""
    rule: str | None = None
    """How a label was located (``RULES``)."""
    reason: str | None = None
    """Why the answer was refused (``REASONS``)."""
    superseded: str | None = None
    """The label a revision superseded (rule ``revision``)."""

    def detail(self) -> dict[str, str]:
        """What a record's detail holds of the reading: ``rule`` (and the ``superseded`` label of a
        revision), or ``unparsed`` (the reason).
        """
        if self.reason is not None:
            return {UNPARSED_REASON: self.reason}
        return {"rule": str(self.rule), **({"superseded": self.superseded} if self.superseded is not None else {})}


def _refused(reason: str) -> Reading:
    return Reading(UNPARSED, reason=reason)


def read(text: str, vocab: Vocabulary, lang: AnswerLanguage = ENGLISH) -> Reading:
    """The label ``text`` commits to in ``vocab``, read with ``lang``'s words (and every built-in's).

    Args:
        text: The answer (a reasoning model's thinking already separated from it).
        vocab: The labels (``Vocabulary.of_labels``) or choice letters (``Vocabulary.of_options``).
        lang: The answers' language, with a suite's own words.

    Returns:
        The label and the rule that located it, or ``UNPARSED`` and the reason it was refused.
    """
    words = reading_words(lang)
    vocab = vocab.inflected(lang.code)  # vraie, falsa, wahre: the language's own forms of its label words
    text, from_json = json_answer(text, vocab.json_key)
    body = normalise(text, (*words.cues, *words.revisions, *words.drafts))
    if not body:
        return _refused("empty")
    s = scan(body, vocab, words)
    lists = echo.listed(s, vocab)
    found = locate(s, vocab, lists)
    if found:
        end = echo.invented_item(s, found[0].mention.end)
        if end is not None:
            s = echo.cut(s, end)
            lists = echo.listed(s, vocab)
            found = locate(s, vocab, lists)
    if not found:
        return _refused(verdicts(s) or ("echoed-list" if lists else "doubted" if s.doubted else "no-answer"))
    revision = revision_start(s, found)
    if revision is not None:
        return _revised(s, vocab, revision)
    reason, kept = refusal(s, found, lists)
    if reason is not None:
        return _weighed(s, vocab, found, reason)
    if weigh.contradicted(s, vocab, kept[0].label, min(c.start for c in kept)):
        return _refused("several-answers")  # a discussion before the answer took another label
    rule = min((c.rule for c in kept), key=RULE_ORDER.index)
    return Reading(kept[0].label, rule="json" if from_json else rule)


def _revised(s: Scan, vocab: Vocabulary, revision: Revision) -> Reading:
    """The reading of an answer that revises itself: what its last revision commits to, refused as
    any answer is (and for the speaker's doubt anywhere); committing to nothing, it takes the answer back.
    """
    tail = revised(s, revision.start)
    lists = echo.listed(tail, vocab)
    found = locate(tail, vocab, lists)
    if not found:
        return _refused(verdicts(tail) or "retracted")
    reason, kept = refusal(tail, found, lists)
    if reason is None and s.doubted:
        reason = "doubted"
    if reason is not None:
        return _weighed(tail, vocab, found, reason) if not s.doubted else _refused(reason)
    return Reading(kept[0].label, rule="revision", superseded=revision.superseded)


def _weighed(s: Scan, vocab: Vocabulary, found: list[Commitment], reason: str) -> Reading:
    """The final answer after a discussion that commits to nothing else (``lingdiag.parse.weigh``),
    else the answer refused for ``reason``.
    """
    label = weigh.weighed(s, vocab, found)
    return _refused(reason) if label is None else Reading(label, rule="weighed")


def json_answer(text: str, key: str) -> tuple[str, bool]:
    """``text`` with its first JSON object written as lines: ``key``'s value as a final-answer line
    (True: it had one), else each plain value as ``name: value``; other text kept around it.
    """
    found = extract_json_span(text) if "{" in text else None
    if found is None:
        return text, False
    obj, start, end = found
    values = _nested(obj, key)
    if values:  # several different nested labels are several answers, refused as such
        lines = "\n".join(f"Final answer: {v}" for v in values)
        used = True
    else:
        lines = "\n".join(f"{k}: {v}" for k, v in obj.items() if isinstance(v, (str, int)) and not isinstance(v, bool))
        used = False
    return f"{text[:start]}\n{lines}\n{text[end:]}", used


JSON_KEYS = ("label", "answer", "final_answer", "verdict", "prediction", "result", "choice", "output")
"""Keys that hold the label in a nested JSON answer (``{"result": {"label": "False"}}``), besides the
suite's own key, which is looked for first."""


def _nested(obj: dict[str, Any], key: str) -> list[str]:
    """The plain values of ``key`` in ``obj``; else, at any depth, of ``key`` or one of ``JSON_KEYS``
    (breadth first: the shallowest level holding one wins), each once; empty if none.
    """
    level: list[dict[str, Any]] = [obj]
    depth = 0
    while level and depth < _DEPTH:
        for keys in ((key,), JSON_KEYS):
            found = [str(d[k]) for d in level for k in keys
                     if isinstance(d.get(k), (str, int)) and not isinstance(d.get(k), bool)]
            if found:
                return list(dict.fromkeys(found))
            if depth == 0:
                break  # at the top, the suite's own key only (other keys are written as lines)
        level = [v for d in level for v in d.values() if isinstance(v, dict)]
        depth += 1
    return []


_DEPTH = 16
"""Levels of a nested JSON answer searched for its label."""


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (inside code fences or not), or None."""
    found = extract_json_span(text)
    return None if found is None else found[0]


def extract_json_span(text: str) -> tuple[dict[str, Any], int, int] | None:
    """The first JSON object in ``text`` with where it stands (a fenced one: the whole fence), or None.

    Single quotes are tolerated (``{'label': 'True'}``).
    """
    for fence in _FENCE.finditer(text):
        found = _object(fence.group(1))
        if found is not None:
            return found[0], fence.start(), fence.end()
    return _object(text)


_TRIED = 16
"""JSON objects tried per text, in order: a text of a thousand braces is no thousand parses."""


def _object(text: str) -> tuple[dict[str, Any], int, int] | None:
    """The first of the first ``_TRIED`` balanced ``{…}`` spans of ``text`` that parses as an object."""
    for start, end in _balanced(text)[:_TRIED]:
        blob = text[start:end + 1]
        for attempt in (blob, blob.replace("'", '"')):
            try:
                obj = json.loads(attempt)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(obj, dict):
                return obj, start, end + 1
    return None


_BRACES = re.compile(r'[{}"\\]')


def _balanced(text: str) -> list[tuple[int, int]]:
    """Every balanced ``{…}`` span of ``text`` (strings in double quotes skipped), by start: one pass
    over its braces, quotes and backslashes.
    """
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    in_str = False
    escaped = -2
    for m in _BRACES.finditer(text):
        pos, ch = m.start(), m.group()
        if in_str:
            if ch == "\\":
                escaped = pos if escaped != pos - 1 else -2
            elif ch == '"' and escaped != pos - 1:
                in_str = False
            continue
        if ch == '"' and opened:
            in_str = True
        elif ch == "{":
            opened.append(pos)
        elif ch == "}" and opened:
            spans.append((opened.pop(), pos))
    return sorted(spans)
