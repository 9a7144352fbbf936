"""The label parser in the prompt's language: cue words, copulas, unsegmented scripts, NFKC,
and the same never-a-guess rules as in English (a label followed by another is unparsed).

The parser receives the answer text only (separating a reasoning model's thinking is not its job).
"""

from __future__ import annotations

import pytest

from lingdiag.errors import UnknownNameError
from lingdiag.parse.labels import ENGLISH, language, parse_label
from lingdiag.records import UNPARSED

LABELS = ("True", "False", "Unknown")
WORDS = {
    "en": {},
    "de": {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"},
    "es": {"verdadero": "True", "falso": "False", "desconocido": "Unknown"},
    "zh": {"对": "True", "错": "False", "不确定": "Unknown"},
    "ja": {"正しい": "True", "誤り": "False", "不明": "Unknown"},
}

CASES = [
    ("en", "Answer: False", "False"),
    ("en", "Well, I believe the answer is Unknown here.", "Unknown"),
    ("en", "The answer is True. Actually False.", "False"),
    ("en", "Ｔｒｕｅ", "True"),  # every language is read after NFKC (full-width forms)
    ("de", "Antwort: Wahr", "True"),
    ("de", "Die Antwort lautet falsch, denn der Satz sagt nichts darüber.", "False"),
    ("de", "Antwort：ＷＡＨＲ", "True"),  # full-width colon and letters
    ("de", "Antwort: wahr. Nein, falsch.", UNPARSED),
    ("de", "Die Antwort ist nicht wahr.", UNPARSED),
    ("es", "Respuesta: Verdadero", "True"),
    ("es", "Creo que la respuesta es falso porque la casa no se terminó.", "False"),
    ("es", "¡Falso!", "False"),
    ("es", "Respuesta: verdadero o falso", UNPARSED),
    ("zh", "答案：对", "True"),
    ("zh", "答案是对。", "True"),
    ("zh", "我认为答案是错的，因为他没有建完房子。", "False"),
    ("zh", "对", "True"),
    ("zh", "答案：不确定", "Unknown"),
    ("zh", "答案：Ｔｒｕｅ", "True"),
    ("zh", "答案是对，不，是错", UNPARSED),
    ("zh", "答案不是对", UNPARSED),
    ("zh", "对还是错？", UNPARSED),
    ("zh", "我觉得不对", UNPARSED),
    ("ja", "答え：正しい", "True"),
    ("ja", "答えは「誤り」です。", "False"),
    ("ja", "この文の答えは不明です。", "Unknown"),
    ("ja", "答えは正しい、いや誤り", UNPARSED),
    ("ja", "正しいか誤りか", UNPARSED),
]


@pytest.mark.parametrize(("code", "text", "expected"), CASES)
def test_answers_parsed_in_their_language(code: str, text: str, expected: str) -> None:
    label, detail = parse_label(text, LABELS, aliases=WORDS[code], lang=language(code))
    assert label == expected, detail
    if code == "en":  # English records stay as they were: no language keys
        revised = label != UNPARSED and detail["rule"] == "revision"
        keys = {"unparsed"} if label == UNPARSED else {"rule", "superseded"} if revised else {"rule"}
        assert set(detail) == keys
    else:
        assert detail["language"] == code and detail["normalisation"] == "NFKC"


def test_english_default_and_unknown_language() -> None:
    assert parse_label("The answer is True.", LABELS) == parse_label("The answer is True.", LABELS, lang=ENGLISH)
    with pytest.raises(UnknownNameError, match="answer language"):
        language("xx")


def test_a_suites_own_cue_words() -> None:
    zh = language("zh")
    assert parse_label("结果是对", LABELS, aliases=WORDS["zh"], lang=zh)[0] == UNPARSED
    assert parse_label("结果是对", LABELS, aliases=WORDS["zh"], lang=zh.extended({"cues": ["结果"]}))[0] == "True"
    assert parse_label("结果：对", LABELS, aliases=WORDS["zh"], lang=zh)[0] == "True"  # a label after a colon


@pytest.mark.parametrize(("code", "aliases", "text", "expected"), [
    ("fr", {"vrai": "True", "faux": "False", "inconnu": "Unknown"}, "L'hypothèse est vraie.", "True"),
    ("fr", {"vrai": "True", "faux": "False", "inconnu": "Unknown"}, "La réponse est fausse.", "False"),
    ("fr", {"vrai": "True", "faux": "False", "inconnu": "Unknown"}, "La réponse : inconnue.", "Unknown"),
    ("fr", {"vrai": "True", "faux": "False", "inconnu": "Unknown"}, "La réponse n'est pas fausse.", UNPARSED),
    ("es", {"verdadero": "True", "falso": "False", "desconocido": "Unknown"}, "La hipótesis es falsa.", "False"),
    ("es", {"verdadero": "True", "falso": "False", "desconocido": "Unknown"}, "Respuesta: desconocida", "Unknown"),
    ("de", {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"}, "Die Hypothese ist eine falsche.", "False"),
    ("de", {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"}, "Das ist die falsche Frage.", UNPARSED),
    # the English label names are no words of these languages: truer is no form of True
    ("de", {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"}, "Truer.", UNPARSED),
])
def test_a_built_in_languages_label_words_are_read_in_their_inflected_forms(
        code: str, aliases: dict[str, str], text: str, expected: str) -> None:
    assert parse_label(text, LABELS, aliases=aliases, lang=language(code))[0] == expected
