"""lingdiag's answer parsers a suite file's generation condition names (``parser: nli-label``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import ENGLISH, WORD_KINDS, AnswerLanguage, parse_label, suite_language
from lingdiag.parse.rating import clean_answer, parse_rating
from lingdiag.records import UNPARSED, UNPARSED_REASON
from lingdiag.suitefile.schema import Formulation


@dataclass(frozen=True)
class AnswerFormat:
    """What a parser needs besides the text."""

    labels: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    """Surface form → label pairs (``nli-label``)."""
    json_key: str = "label"
    options: tuple[tuple[str, str], ...] = ()
    """Letter → label pairs in prompt order (``choice-letter``)."""
    language: AnswerLanguage = ENGLISH
    """The answers' language with the suite's own words (``nli-label``, ``choice-letter``: the
    reader's words, ``lingdiag.parse.language``)."""


def answer_language(f: Formulation) -> AnswerLanguage:
    """The language a condition's answers are read in, with the file's own words.

    Raises:
        ConfigError: a language lingdiag has no words for, and not enough given.
    """
    return suite_language(f.language or ENGLISH.code, {kind: getattr(f, kind) or () for kind in WORD_KINDS})


Parser = Callable[[str, AnswerFormat], tuple[str, dict[str, Any]]]


def _nli_label(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    label, detail = parse_label(text, fmt.labels, aliases=dict(fmt.aliases), json_key=fmt.json_key,
                                lang=fmt.language)
    return label, {k: v for k, v in detail.items()
                   if k in ("rule", UNPARSED_REASON, "json", "language", "normalisation")}


def _rating(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    rating = parse_rating(text)
    if rating <= 0:
        return UNPARSED, {"rating": rating, UNPARSED_REASON: "no-rating"}
    if fmt.labels and str(rating) not in fmt.labels:
        return UNPARSED, {"rating": rating, UNPARSED_REASON: "rating-not-a-label"}
    return str(rating), {"rating": rating}


def _choice_letter(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    options = dict(fmt.options)
    reading = read_letter(text, options, fmt.language)
    if reading.reason is not None:
        return UNPARSED, {"letter": None, **reading.detail()}
    return options[reading.label], {"letter": reading.label, **reading.detail()}


def _free_text(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    answer = clean_answer(lines[0]) if lines else ""
    if not fmt.labels:
        return (answer, {}) if answer else (UNPARSED, {UNPARSED_REASON: "empty"})
    by_lower = {lab.lower(): lab for lab in fmt.labels}
    label = by_lower.get(answer.lower(), UNPARSED)
    return label, ({UNPARSED_REASON: "not-a-label"} if label == UNPARSED else {})


PARSERS: dict[str, Parser] = {
    "nli-label": _nli_label,  # lingdiag.parse.reader over the labels: a committed label, never a taken-back one
    "rating": _rating,  # lingdiag.parse.rating: the first 1-10 number, scale phrases removed
    "choice-letter": _choice_letter,  # lingdiag.parse.reader over the letters: a letter, "Answer: B", an option's text
    "free-text": _free_text,  # the first line, cleaned; one of the labels (any case) where labels are given
}
"""Parser name → parser; a suite file names one (``parser: nli-label``)."""
