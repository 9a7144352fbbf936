"""The option letter of a multiple-choice answer, by the answer reader (``lingdiag.parse.reader``)."""

from __future__ import annotations

from collections.abc import Mapping

from lingdiag.parse.language import ENGLISH, AnswerLanguage
from lingdiag.parse.reader import Reading, read
from lingdiag.parse.scan import Vocabulary


def read_letter(text: str, options: Mapping[str, str], lang: AnswerLanguage = ENGLISH) -> Reading:
    """The option letter ``text`` commits to, or ``UNPARSED`` with the reason.

    Args:
        text: The answer.
        options: Letter → option text as the prompt lists them (``{"A": "then", "B": "so"}``).
        lang: The answers' language (every built-in language's words are read too).

    Returns:
        The reading: the letter as ``options`` spells it (``answer: b`` is ``B``), a letter named by
        its option's text (``Answer: so`` is ``B``), or the reason none was read.
    """
    return read(text, Vocabulary.of_options(options), lang)


def parse_letter(text: str, options: Mapping[str, str], lang: AnswerLanguage = ENGLISH) -> str | None:
    """The option letter in a multiple-choice answer, or None (``read_letter`` gives the reason)."""
    reading = read_letter(text, options, lang)
    return reading.label if reading.reason is None else None
