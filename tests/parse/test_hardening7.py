"""Issue 66's reader families: what follows a struck-out label, a tagged or boxed answer, a reason,
or the answer itself still takes the answer back, in every built-in language."""

from __future__ import annotations

import pytest

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import language, parse_label
from lingdiag.records import UNPARSED

LABELS = ["True", "False", "Unknown"]
ALIASES = {"de": {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"},
           "fr": {"vrai": "True", "faux": "False", "inconnu": "Unknown"},
           "es": {"verdadero": "True", "falso": "False", "desconocido": "Unknown"},
           "zh": {"对": "True", "错": "False", "不确定": "Unknown"},
           "ja": {"正しい": "True", "誤り": "False", "不明": "Unknown"}}
OPTIONS = {"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"}


def label(text: str, code: str = "en") -> str:
    return parse_label(text, LABELS, aliases=ALIASES.get(code, {}), lang=language(code))[0]


REFUSED = [
    # a struck-out label hides nothing after it
    ("en", "True, not False, probably."), ("en", "True, not False, if he finished."),
    ("en", "True, not False, but only partly."), ("en", "Unknown, not True, maybe."),
    ("de", "Wahr, nicht falsch, vielleicht."), ("fr", "Vrai, pas faux, peut-être."),
    ("es", "Verdadero, no falso, quizás."),
    # what follows a tagged or boxed answer on its line speaks of it
    ("en", "<answer>True</answer> is incorrect."), ("en", "<answer>True</answer> is wrong."),
    ("en", "$\\boxed{True}$ is incorrect."), ("en", "<answer>True</answer>? I doubt it."),
    ("en", "<final_answer>False</final_answer> might be right."),
    # a double negation in the reason offers the other label
    ("en", "False because True is not wrong."), ("en", "Unknown, since True cannot be ruled out."),
    ("en", "False. True is not wrong either."), ("de", "Falsch, weil wahr nicht unrichtig ist."),
    # a label denied before it is stated again
    ("en", "Neither True nor False. True."), ("en", "Neither True nor False.\n\nAnswer: True"),
    ("fr", "Ni vrai ni faux. Vrai."), ("es", "Ni verdadero ni falso. Verdadero."),
    ("de", "Weder wahr noch falsch. Wahr."),
    # retraction phrases, and an answer followed by a bare no
    ("en", "True. I take that back."), ("en", "True. Never mind."), ("en", "True. Strike that."),
    ("en", "True. Just kidding."), ("en", "True. No."), ("en", "Answer: False. Nope."),
    ("en", "Answer: True.\nForget that."), ("de", "Wahr. Ich nehme das zurück."), ("de", "Wahr. Nein."),
    ("fr", "Vrai. Je retire ce que j'ai dit."), ("fr", "Vrai. Non."), ("es", "Verdadero. Retiro lo dicho."),
    ("es", "Verdadero. No."), ("zh", "对。我收回。"), ("zh", "对。算了。"), ("zh", "对。不是。"),
    ("ja", "正しい。取り消します。"), ("ja", "正しい。いいえ。"),
]


@pytest.mark.parametrize(("code", "text"), REFUSED)
def test_refused(code: str, text: str) -> None:
    assert label(text, code) == UNPARSED


LETTERS_REFUSED = ["B, not A, probably.", "<answer>B</answer> is incorrect.", "B because A is not wrong.",
                   "Neither A nor B. A.", "B. Just kidding.", "C. No."]


@pytest.mark.parametrize("text", LETTERS_REFUSED)
def test_letters_refused(text: str) -> None:
    assert read_letter(text, OPTIONS, language("en")).label == UNPARSED


READ = [
    ("True, not False.", "True"), ("True, not False, because he finished the house.", "True"),
    ("<answer>True</answer>\nThe premise says he finished.", "True"),
    ("The answer is $\\boxed{False}$. He never finished.", "False"),
    ("<answer>False</answer> because he was still building it.", "False"),
    ("False because True is wrong.", "False"),  # a single denial in the reason keeps the answer
    ("Neither True nor False: Unknown.", "Unknown"),
    ("No, the premise does not say he finished. Answer: Unknown", "Unknown"),  # a no before the answer
]


@pytest.mark.parametrize(("text", "expect"), READ)
def test_read(text: str, expect: str) -> None:
    assert label(text) == expect


STRUCTURE = [
    ('{"result": {"label": "False"}}', "False"),  # a label key nested at any depth
    ('```json\n{"analysis": {"reasoning": "he was building it", "verdict": "Unknown"}}\n```', "Unknown"),
    ('{"a": {"label": "True"}, "b": {"label": "False"}}', UNPARSED),  # two nested labels: several answers
    ("<verdict>False</verdict>", "False"), ("<final>True</final>", "True"),  # other answer tags
    ("<Antwort>wahr</Antwort>", "True"), ("<verdict>True</verdict> is wrong.", UNPARSED),
]


@pytest.mark.parametrize(("text", "expect"), STRUCTURE)
def test_labels_in_structure(text: str, expect: str) -> None:
    assert parse_label(text, LABELS, aliases=ALIASES["de"], lang=language("de"))[0] == expect


AROUND = [
    ("The premise says he was building it.\n→ Unknown", "en", "Unknown"),  # an arrow as an answer cue
    ("➡️ False", "en", "False"), ("Answer: True ✅", "en", "True"),  # a check mark confirms
    ("Answer: True ❌", "en", UNPARSED),
    ("True, so maybe.", "en", UNPARSED), ("True, I guess.", "en", UNPARSED),  # a short clause hedging it
    ("True, because he might not have finished it.", "en", "True"),  # a reason's hedge is the reason's
    ("Also ist die Antwort falsch.", "de", "False"),  # German "also" is "so" in a German answer
    ("Wahr, also vielleicht.", "de", UNPARSED),
]


@pytest.mark.parametrize(("text", "code", "expect"), AROUND)
def test_what_stands_around_a_label(text: str, code: str, expect: str) -> None:
    assert label(text, code) == expect
