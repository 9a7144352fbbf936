"""Where an answer commits to a label, and by which rule."""

import pytest

from lingdiag.parse import echo
from lingdiag.parse.language import language, reading_words
from lingdiag.parse.locate import Commitment, locate
from lingdiag.parse.scan import Token, Vocabulary, scan

NLI = Vocabulary.of_labels(("True", "False", "Unknown"), {"wahr": "True", "falsch": "False", "对": "True"})
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})


def found(text: str, vocab: Vocabulary = NLI, code: str = "en") -> list[tuple[str, str, bool]]:
    """Each mention's first commitment (by ``RULE_ORDER``; several rules may commit to one mention)."""
    s = scan(text, vocab, reading_words(language(code)))
    first: dict[Token, Commitment] = {}
    for c in locate(s, vocab, echo.listed(s, vocab)):
        first.setdefault(c.mention, c)
    return [(c.label, c.rule, c.listed) for c in first.values()]


def test_several_rules_may_commit_to_one_mention() -> None:
    s = scan("The answer is clearly: True", NLI, reading_words(language("en")))
    assert [c.rule for c in locate(s, NLI, echo.listed(s, NLI))] == ["cue", "colon"]


@pytest.mark.parametrize(("text", "commitments"), [
    ("True", [("True", "whole-answer", False)]),
    ("The correct answer is: True", [("True", "cue", False)]),
    ("The answer to this question is clearly True", [("True", "cue", False)]),
    ("Die Antwort lautet falsch.", [("False", "cue", False)]),
    ("答案是对的。", [("True", "cue", False)]),
    ("The hypothesis is true.", [("True", "subject", False)]),
    ("The hypothesis is true for now", []),  # a subject's label must end its clause
    ("Reasoning.\nTrue", [("True", "line", False)]),
    ("False - the storm destroyed it", [("False", "leading", False)]),
    ("Definitely True.", [("True", "whole-answer", False)]),  # an adverb before the label is no text of its own
    ("… True or False? False, because", [("False", "leading", False)]),  # a sentence opening with a label
    ("To answer this, we check whether True holds", []),  # the cue's gap has no copula or colon
    ("Answer: True or False", [("True", "cue", True)]),  # the cue points at a list
    ("True\nFalse\nUnknown", []),
])
def test_label_commitments(text: str, commitments: list[tuple[str, str, bool]]) -> None:
    assert found(text) == commitments


@pytest.mark.parametrize(("text", "commitments"), [
    ("Option C", [("C", "cue", False)]),
    ("Option A would imply completion", []),  # a reference to A, not a choice
    ("answer: b", [("B", "cue", False)]),
    ("The answer is a bit ambiguous", []),
    ("The answer is \"in an hour\".", [("A", "cue", False)]),
    ("for an hour", [("B", "whole-answer", False)]),
    ("B) for an hour", [("B", "whole-answer", False)]),
    ("for an hour (B)", [("B", "whole-answer", False)]),  # an option's text, then its own letter
    ("for an hour (C)", []),  # another letter after it: no commitment of the line
    ("B is correct.", [("B", "leading", False)]),
    ("I think B is correct.", [("B", "affirmed", False)]),
    ("C\nThe arrival is a point.", [("C", "line", False)]),
    ("I choose b.", [("B", "cue", False)]),
    ("La opción correcta es la C.", [("C", "cue", False)]),
    ("Creo que es la B.", [("B", "cue", False)]),  # creo que: a cue; es: a copula, la: an article
])
def test_letter_commitments(text: str, commitments: list[tuple[str, str, bool]]) -> None:
    assert found(text, ABCD) == commitments
