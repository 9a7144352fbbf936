"""Numeric ratings in free answers (ExpliCa's acceptability scale, and any 1-10 rating a suite file asks for)."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"<\|[^|>]*\|>|</?s>|<end_of_turn>|<start_of_turn>|<eos>|<pad>|\[/?INST\]")
_SCALE = re.compile(r"\b(?:out of|/)\s*10\b|\b(?:from\s+)?1\s*(?:to|-|–)\s*10\b", re.I)


def clean_answer(text: str) -> str:
    """ExpliCa's Appendix D: drop end-of-text tags, markdown symbols, quotes and extra spaces."""
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
