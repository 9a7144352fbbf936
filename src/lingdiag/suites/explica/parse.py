"""The cloze parser; Appendix D answer cleaning, the rating and the letter parsers are shared
(``lingdiag.parse``) and re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lingdiag.parse.choice import parse_letter
from lingdiag.parse.rating import clean_answer, parse_rating
from lingdiag.records import UNPARSED
from lingdiag.suites.explica import data

__all__ = ["clean_answer", "parse_connective", "parse_letter", "parse_rating"]

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
