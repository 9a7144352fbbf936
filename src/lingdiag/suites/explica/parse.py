"""Appendix D answer cleaning and the rating, cloze and multiple-choice parsers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lingdiag.records import (
    UNPARSED,
)
from lingdiag.suites.explica import data

_SPECIAL = re.compile(r"<\|[^|>]*\|>|</?s>|<end_of_turn>|<start_of_turn>|<eos>|<pad>|\[/?INST\]")
_SCALE = re.compile(r"\b(?:out of|/)\s*10\b|\b(?:from\s+)?1\s*(?:to|-|–)\s*10\b", re.I)


def clean_answer(text: str) -> str:
    """Appendix D: drop end-of-text tags, markdown symbols, quotes and extra spaces."""
    text = _SPECIAL.sub(" ", text)
    text = re.sub(r"[*_`#\"“”‘’]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" '.,:;!?()[]{}-")


def parse_rating(text: str) -> int:
    """The rating in an answer, or -1.

    The rating is the first number once scale phrases ("out of 10", "1 to 10") are
    removed, if it is an integer 1-10. A number after "sentence", "event", "example" or
    "step" ("Sentence 1: ...") labels something and is not a rating. A number opening the
    answer is, even before a full stop and more text ("8. The connective ..."): the authors'
    cleaning reads it so (../shared/reference/explica/analysis/cleaning_answers.py,
    ``clean_acc_res``), and so do the published cleaned ratings.
    """
    body = _SCALE.sub(" ", clean_answer(text))
    body = re.sub(r"\b(?:sentence|event|example|step)\s+\d+", " ", body, flags=re.I)
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w])", body)
    if not m:
        return -1
    value = float(m.group(1))
    return int(value) if value.is_integer() and 1 <= value <= 10 else -1


def parse_connective(text: str, allowed: Sequence[str] = data.CONNECTIVES) -> str:
    """The connective in a cloze answer: the first word if it is one and is not the start
    of a list ("then or after", "so, because"), else the only connective mentioned;
    ``UNPARSED`` when none or several are (out-of-list is a miss). A repeated connective
    (``"then" then``, ``# Because`` and ``because`` on the next line) is that connective, as in the authors' cleaning
    (cleaning_answers.py, ``clean_cloze_res``).
    """
    words: list[str] = re.findall(r"[a-z]+", clean_answer(text).lower())
    if words and words[0] in allowed:
        listed = [w for w in words[1:3] if w not in ("or", "and")][:1]
        if not listed or listed[0] not in allowed:
            return words[0]
        if listed[0] != words[0]:
            return UNPARSED
    # A repeated first connective falls through: it counts if no other one is mentioned.
    mentioned = {w for w in words if w in allowed}
    return mentioned.pop() if len(mentioned) == 1 else UNPARSED


def parse_letter(text: str, options: Mapping[str, str]) -> str | None:
    """The option letter in a multiple-choice answer, or None.

    Accepted: a leading letter ("B", "B.", "(B)", "B) so", "B - so"), "Answer: B", or the
    answer being exactly one of the listed connectives.
    """
    body = clean_answer(text)
    m = re.match(r"[(\[]?([A-D])(?:$|[.):,\]]|\s*[-–]\s|\s+(?:so|because|then|after)\b)", body)
    if m:
        return m.group(1)
    m = re.search(r"\banswer\b\s*(?:is)?\s*[:=]?\s*[(\[]?([A-D])\b", body, re.I)
    if m:
        return m.group(1)
    by_word = {c: k for k, c in options.items()}
    return by_word.get(body.lower())
