"""English morphology by lemminflect: the one module every suite and the audit ask."""

from __future__ import annotations

import pytest

from lingdiag.prompts import morphology
from lingdiag.prompts.morphology import conjugate


def test_verb_forms_come_from_lemminflect() -> None:
    assert [morphology.verb_tag(v) for v in ("hammered", "ran", "speaks", "work", "cut", "listening")] == [
        "VBD", "VBD", "VBZ", "VBP", "VBD", "VBG"]
    assert morphology.inflect("ran", "VBG") == "running" and morphology.inflect("bought", "VBG") == "buying"
    assert morphology.inflect("panicked", "VBG") == "panicking" and morphology.inflect("ate up", "VBG") == "eating up"
    # Tense follows the premise verb, number and person follow the subject.
    assert conjugate("change", "ran", "I") == "changed"
    assert conjugate("do", "works", "she") == "does" and conjugate("do", "work", "the twins") == "do"
    assert conjugate("be", "sips", "I") == "am" and conjugate("be", "sipped", "the scholars") == "were"
    assert conjugate("travel", "yawns", "Mary") == "travels"


@pytest.mark.parametrize("np,plural", [
    ("the metal", False), ("China's scholars", True), ("us", True), ("her", False), ("the rest of the apples", False),
    ("the cat and the dog", True), ("the children", True), ("a side of fries", False),
])
def test_is_plural(np: str, plural: bool) -> None:
    assert morphology.is_plural(np) is plural


def test_the_lookups() -> None:
    assert morphology.inflections("run", "VBG") == ("running",)
    assert morphology.verb_lemmas("ran") == ("run",) and morphology.noun_lemmas("twins") == ("twin",)
    assert morphology.lemmas_by_pos("xqzv") == {} and morphology.lemmas_by_pos("running")["VERB"] == ("run",)
    assert "ran" in morphology.all_inflections("run")["VBD"]
