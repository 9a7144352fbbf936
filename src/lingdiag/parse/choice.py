"""The option letter of a multiple-choice answer."""

from __future__ import annotations

import re
from collections.abc import Mapping

from lingdiag.parse.rating import clean_answer


def parse_letter(text: str, options: Mapping[str, str]) -> str | None:
    """The option letter in a multiple-choice answer, or None.

    Accepted: a leading letter ("B", "B.", "(B)", "B) so", "B - so"), "Answer: B", or the
    answer being exactly one of the listed options. ``options`` maps letter → option text
    (``{"A": "then", "B": "so", ...}``).
    """
    body = clean_answer(text)
    letters = "|".join(map(re.escape, options))
    words = "|".join(map(re.escape, options.values()))
    m = re.match(rf"[(\[]?({letters})(?:$|[.):,\]]|\s*[-–]\s|\s+(?:{words})\b)", body)
    if m:
        return m.group(1)
    m = re.search(rf"\banswer\b\s*(?:is)?\s*[:=]?\s*[(\[]?({letters})\b", body, re.I)
    if m:
        return m.group(1)
    by_word = {c: k for k, c in options.items()}
    return by_word.get(body.lower())
