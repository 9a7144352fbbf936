"""The reader stays linear in the answer's length: the work a reading does (Python calls, counted,
so the test does not depend on the machine's load) grows by about 4 when the answer holds 4 times
as many label mentions, in every shape an answer may repeat them in (``bench/reader_linear.py``
prints the seconds: 8,000 mentions read in well under a second on an idle core).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import language, parse_label

LABELS = ["True", "False", "Unknown"]
OPTIONS = {"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"}
SHAPES: dict[str, Callable[[int], str]] = {
    "sentences": lambda n: "True. " * n,
    "one clause": lambda n: "True " * n,
    "commas": lambda n: "True, " * n,
    "lines": lambda n: "True\n" * n,
    "reasons": lambda n: "The answer is True because it is not False. " * (n // 2),
    "revisions": lambda n: "True. Actually, False. " * (n // 2),
    "letters": lambda n: "A is wrong, B) for an hour. " * (n // 2),
    # a discussion weighed before its final answer (parse.weigh): items, headings, questions answered
    "weighed": lambda n: "- True: no.\n- False: the premise does not say.\nUnknown?\nYes.\n" * (n // 3)
    + "Answer: Unknown",
    "weighed letters": lambda n: "A) in an hour – incorrect, C fits better. " * (n // 2) + "That leaves B.",
}


def _read(text: str, letters: bool) -> object:
    if letters:
        return read_letter(text, OPTIONS, language("en")).label
    return parse_label(text, LABELS, lang=language("en"))[0]


def _calls(text: str, letters: bool) -> int:
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    _read(text, letters)  # the patterns are compiled once, before counting
    sys.setprofile(profile)
    try:
        _read(text, letters)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_work_grows_linearly_with_the_mentions(shape: str) -> None:
    letters = shape.startswith("letters") or shape.endswith("letters")
    small, large = (_calls(SHAPES[shape](n), letters) for n in (250, 1000))
    assert large / small < 5, f"{shape}: {small} calls at 250 mentions, {large} at 1,000"


def test_eight_thousand_mentions_are_read_in_seconds() -> None:
    text = "True " * 8000  # one clause of 8,000 mentions: 249 s before the reader was made linear
    _read(text, False)
    start = time.perf_counter()
    _read(text, False)
    # Generous for a loaded shared machine (about 0.2 s on an idle core).
    assert time.perf_counter() - start < 10
