"""Scripted answers in eight languages, each with the label it gives or ``unparsed``: the label
parser never reads a label the answer did not give (issue 44).

Six languages have words built in (en, de, es, fr, zh, ja); Russian and Korean are declared with
the words a suite file gives (``suite_language``, the path ``language: ru`` in a suite file takes).
Every family of misreading is here in every language: a label that opens an answer and is then
questioned or negated, a label that is only the start of another word in a script without
spaces, a negation matched inside a word, two labels, a hedge, and the plain answers that must
still be read.
"""

from __future__ import annotations

import pytest

from lingdiag.parse.labels import parse_label, suite_language
from lingdiag.records import UNPARSED

LABELS = ("True", "False", "Unknown")
U = UNPARSED

WORDS: dict[str, dict[str, list[str]]] = {
    "ru": {"cues": ["ответ"], "copulas": ["—"], "negations": ["не", "нет"], "questions": ["ли"],
           "reasons": ["потому", "так как"], "affirmations": ["нет сомнений"]},
    "ko": {"cues": ["답", "정답", "결론"], "negations": ["아닙니다", "아니다", "아니요", "않습니다"],
           "questions": ["아마"], "reasons": ["왜냐하면"],
           "particles": ["입니다", "이다", "이", "가", "은", "는", "을", "를", "예요", "이에요", "이야", "으로",
                         "이라고"]},
}
ALIASES = {
    "en": {},
    "de": {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"},
    "es": {"verdadero": "True", "falso": "False", "desconocido": "Unknown"},
    "fr": {"vrai": "True", "faux": "False", "inconnu": "Unknown"},
    "zh": {"对": "True", "错": "False", "不确定": "Unknown"},
    "ja": {"正しい": "True", "誤り": "False", "不明": "Unknown"},
    "ru": {"верно": "True", "неверно": "False", "неизвестно": "Unknown"},
    "ko": {"참": "True", "거짓": "False", "모름": "Unknown"},
}

ANSWERS: dict[str, list[tuple[str, str]]] = {
    "en": [("True", "True"), ("False.", "False"), ("The answer is Unknown.", "Unknown"), ("True? No.", U),
           ("True or not, I cannot say.", U), ("False is not the answer here.", U),
           ("False, because he did not finish the house.", "False"), ("Answer: True or False", U),
           ("I cannot say whether it is True.", U), ("True. The premise entails it.", "True"), ("True maybe.", U),
           ("Answer: True, not False", "True"), ("Truly, I cannot tell.", U), ("True?", U),
           ("False because it is not finished.", "False"), ("The answer is True... or not.", U)],
    "de": [("Wahr", "True"), ("Antwort: falsch", "False"), ("Wahr ist das nicht.", U), ("Wahr? Nein.", U),
           ("Die Antwort ist nicht wahr.", U), ("Falsch, weil das Haus nicht fertig ist.", "False"),
           ("Falsch weil das Haus nicht fertig ist.", "False"), ("Wahr oder falsch?", U),
           ("Wahrscheinlich falsch.", U), ("Die Antwort lautet: unbekannt.", "Unknown"), ("Wahr, vielleicht.", U),
           ("Unbekannt ist es nicht", U)],
    "es": [("Verdadero", "True"), ("Respuesta: falso", "False"), ("Verdadero, uno de los dos terminó.", "True"),
           ("¿Verdadero? No.", U), ("Verdadero o no, no lo sé.", U), ("La respuesta no es falso.", U),
           ("Falso porque no terminó la casa.", "False"), ("Falso no es la respuesta.", U),
           ("Respuesta: verdadero o falso", U), ("Desconocido.", "Unknown"),
           ("Creo que la respuesta es falso porque la casa no se terminó.", "False"),
           ("Verdadero según uno de ellos.", "True")],
    "fr": [("Vrai", "True"), ("Réponse : faux", "False"), ("Vrai ? Non.", U),
           ("Faux, le passage ne le dit pas.", "False"),
           ("Vrai selon le passage.", "True"), ("La réponse n'est pas vrai.", U),
           ("Faux n'est pas la bonne réponse.", U),
           ("Vrai ou faux ?", U), ("Inconnu.", "Unknown"), ("Vrai, car il courait.", "True"), ("Peut-être vrai.", U),
           ("La réponse est vrai, je pense", "True")],
    "zh": [("对", "True"), ("答案：错", "False"), ("对不起，我无法回答", U), ("对于这个问题，我无法判断。", U),
           ("对不对？", U), ("答案是对的。", "True"), ("答案（不含解释）：对", "True"),
           ("答案不是对", U), ("对吗？", U),
           ("错，因为他没有建完房子。", "False"), ("不确定。", "Unknown"), ("答案是对还是错？", U),
           ("对的吗？", U), ("答案是错误的。", U), ("对\u200b不起", U), ("对\u200f", "True"), ("对😀", "True")],
    "ja": [("正しい", "True"), ("答え：誤り", "False"), ("答えは誤りではありません。", U), ("正しいですか？", U),
           ("答えは「誤り」です。", "False"), ("この文の答えは不明です。", "Unknown"), ("正しくない。", U),
           ("誤り、なぜなら完成していないから。", "False"), ("不明", "Unknown"),
           ("正しいか誤りか", U), ("誤りではない。", U),
           ("正しいです。", "True")],
    "ru": [("Верно", "True"), ("Ответ: неверно", "False"), ("Верно ли это? Не знаю.", U),
           ("Неверно, потому что дом не достроен.", "False"), ("Верно не это.", U), ("Ответ — верно.", "True"),
           ("Неизвестно.", "Unknown"), ("Верно или неверно?", U), ("Ответ не верно", U),
           ("Верно, нет сомнений.", "True"),
           ("Верно?", U), ("Неверно так как дом не достроен.", "False")],
    "ko": [("참", "True"), ("답: 거짓", "False"), ("참입니다.", "True"), ("참입니까? 모르겠습니다.", U),
           ("거짓이 아닙니다.", U), ("참? 아니요.", U), ("모름", "Unknown"), ("참 또는 거짓", U),
           ("참, 왜냐하면 그는 달리고 있었기 때문입니다.", "True"), ("참 아닙니다", U),
           ("거짓입니다. 집은 완성되지 않았습니다.", "False"), ("아마 참", U),
           # particles after a cue and after a label (Hangul is spaced, its particles close a word)
           ("정답은 참입니다.", "True"), ("답은 거짓이다.", "False"), ("결론: 거짓이에요.", "False"),
           ("전제만으로는 집이 완성되었는지 알 수 없으므로 정답은 모름입니다.", "Unknown"),
           ("정답은 '거짓'입니다.", "False"), ("참을 선택합니다.", "True"), ("정답이 참이 아닙니다.", U),
           ("참가자는 집을 짓고 있었습니다.", U), ("거짓말은 아닙니다.", U), ("정답은 참인가요?", U)],
}
CASES = [(code, text, expected) for code, answers in ANSWERS.items() for text, expected in answers]


def test_many_answers_in_eight_languages() -> None:
    assert len(ANSWERS) == 8 and len(CASES) >= 81


@pytest.mark.parametrize(("code", "text", "expected"), CASES)
def test_no_label_the_answer_did_not_give(code: str, text: str, expected: str) -> None:
    lang = suite_language(code, WORDS.get(code, {}))
    label, detail = parse_label(text, LABELS, aliases=ALIASES[code], lang=lang)
    assert label == expected, detail
