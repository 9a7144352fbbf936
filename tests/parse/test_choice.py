"""The option letter of a multiple-choice answer: read by the reader, in any built-in language, a
lower-case letter after a cue a letter (never a KeyError), the article ``a`` none.
"""

import pytest

from lingdiag.parse.choice import parse_letter, read_letter
from lingdiag.parse.labels import language

OPTIONS = {"A": "then", "B": "so", "C": "after", "D": "because"}


@pytest.mark.parametrize(("text", "letter"), [
    ("B", "B"), ("answer: b", "B"), ("The answer is c.", "C"), ("Answer: so", "B"), ("(D) because", "D"),
    ("The answer is a bit ambiguous…", None), ("a", "A"),  # alone, a lower-case letter is one
    ("Antwort: C", "C"), ("答案：C", "C"), ("Réponse : d", "D"), ("答えはBです。", "B"),  # no language given
    ("Answer: B or C", None), ("then or so", None), ("", None),
])
def test_parse_letter(text: str, letter: str | None) -> None:
    assert parse_letter(text, OPTIONS) == letter


def test_letters_keep_the_options_spelling_and_reasons_are_named() -> None:
    assert parse_letter("answer: B", {"a": "x", "b": "y"}) == "b"
    reading = read_letter("Answer: B or C", OPTIONS, language("de"))
    assert (reading.label, reading.detail()) == ("unparsed", {"unparsed": "several-labels"})
    assert read_letter("Die richtige Antwort ist B.", OPTIONS, language("de")).detail() == {"rule": "cue"}
