"""Free text → a label of a suite's vocabulary, in the prompt's language, by the answer reader
(``lingdiag.parse.reader``). Anything not clearly one label is ``UNPARSED``, with its reason.

The languages (``AnswerLanguage``, ``language``, ``suite_language``; ``lingdiag.parse.language``)
are importable from here too, as before the reader was split into stages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.parse.language import ENGLISH, LANGUAGES, NEEDED, WORD_KINDS, AnswerLanguage, language, suite_language
from lingdiag.parse.reader import extract_json, read
from lingdiag.parse.scan import Vocabulary

__all__ = ["ENGLISH", "LANGUAGES", "NEEDED", "WORD_KINDS", "AnswerLanguage", "extract_json", "language",
           "parse_label", "suite_language"]


def parse_label(
    text: str,
    labels: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    json_key: str = "label",
    lang: AnswerLanguage = ENGLISH,
) -> tuple[str, dict[str, Any]]:
    """Map a model answer to one of ``labels``.

    Args:
        text: The answer text (a reasoning model's thinking already separated from it).
        labels: The label vocabulary, e.g. ``("True", "False", "Unknown")``.
        aliases: Extra surface forms mapped to labels, e.g. ``{"entailment": "0"}`` or the
            prompt language's label words (``{"对": "True"}``).
        json_key: The key holding the label in a JSON answer.
        lang: The language of the prompt and its answers (its words, and a suite's own).

    Returns:
        ``(label or UNPARSED, detail)``: ``detail`` holds ``rule`` (how the label was located,
        ``reader.RULES``) or ``unparsed`` (why the answer was refused, ``reader.REASONS``), the
        answer's JSON object under ``json`` where it held one, and for a language other than
        English ``language`` and ``normalisation``.
    """
    reading = read(text, Vocabulary.of_labels(labels, aliases, json_key), lang)
    obj = extract_json(text) if "{" in text else None
    return reading.label, {**reading.detail(), **({"json": obj} if obj is not None else {}), **lang.recorded()}
