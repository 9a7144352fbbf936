"""Templates of the families that were given labels they never gave, filled with every pair of
labels and of letters, in every built-in language: each one is refused (issue 54's probes, kept).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import language, parse_label
from lingdiag.records import UNPARSED

VOCABULARIES = json.loads((Path(__file__).parent / "corpus" / "vocabularies.json").read_text(encoding="utf-8"))

EN = [
 "I don't think it's {L}.", "It's not {L}.", "{L}? I doubt it.", "{L} is unlikely.", "Probably {L}.",
 "{L}, if anything.", "{L}, but I could be wrong.", "Not {L}, I think.", "{L} or {M}.", "{L}... actually {M}.",
 "{L}. No, {M}.", "Is it {L}? Maybe.", "{L} only when he finished.",
 "Unless he stopped, {L}.", "{L}: no", "{L} — wrong.", "Hard to say; {L}?", "{L}, maybe {M}.",
 "The answer isn't {L}.", "Definitely not {L}.", "{L} seems plausible.", "{L} might be right.",
 "I'd hesitate to say {L}.", "{L} is a possibility.", "{L} (low confidence)", "{L}?!",
 "Answer: {L}?", "Answer: {L} (or {M})", "Answer: {L}/{M}", "Answer: {L}; {M} also possible.",
 "{L}\n{M}", "{L}.\n\nHmm, {M}.", "It could be {L}.",
 "{L} if the premise is read literally.", "{L}, unless we consider the context.", "Neither {L} nor {M}.",
 "{L} is not supported.", "{L} isn't right.", "There is no way it's {L}.", "Nobody would say {L}.",
 "{L} is the wrong answer.", "I would not choose {L}.", "Avoid {L}.", "Not sure. {L}?",
 "{L}, although {M} is tempting.", "Answer: {L}. Though {M} is possible.", "Answer: {L}. Or maybe {M}.",
 "{L} and {M}", "Both {L} and {M}.", "{L}, {M}", "Answer: not {L}",
]
T = {
"de": ["Ich glaube nicht, dass es {L} ist.", "Es ist nicht {L}.", "{L}? Eher nicht.", "Wahrscheinlich {L}.",
       "{L}, aber ich bin unsicher.", "{L} oder {M}.", "{L}. Nein, {M}.", "{L} nur, wenn er fertig wurde.",
       "{L}: nein", "Vielleicht {L}, vielleicht {M}.", "Die Antwort ist nicht {L}.", "{L} scheint unwahrscheinlich.",
       "Antwort: {L} (oder {M})", "Weder {L} noch {M}.", "Ist es {L}?", "Kein {L}.",
       "Antwort: {L}. Allerdings könnte es auch {M} sein."],
"fr": ["Je ne pense pas que ce soit {L}.", "Ce n'est pas {L}.", "{L} ? Pas vraiment.", "Probablement {L}.",
       "{L}, mais je ne suis pas sûr.", "{L} ou {M}.", "{L}. Non, {M}.", "{L} seulement si la maison est finie.",
       "{L} : non", "Peut-être {L}, peut-être {M}.", "La réponse n'est pas {L}.", "{L} semble improbable.",
       "Réponse : {L} (ou {M})", "Ni {L} ni {M}.", "Est-ce {L} ?",
       "Réponse : {L}. Cependant, cela pourrait être {M}."],
"es": ["No creo que sea {L}.", "No es {L}.", "¿{L}? No del todo.", "Probablemente {L}.",
       "{L}, pero no estoy seguro.", "{L} o {M}.", "{L}. No, {M}.", "{L} solo si terminó la casa.",
       "{L}: no", "Quizás {L}, quizás {M}.", "La respuesta no es {L}.", "{L} parece improbable.",
       "Respuesta: {L} (o {M})", "Ni {L} ni {M}.", "¿Es {L}?",
       "Respuesta: {L}. Sin embargo, podría ser {M}."],
"zh": ["我不觉得是{L}。", "不是{L}。", "{L}？不太对。", "可能是{L}。", "{L}，但我不太确定。", "{L}或{M}。",
       "{L}。不，是{M}。", "只有他建完了，才是{L}。", "{L}：否", "也许{L}，也许{M}。", "答案不是{L}。",
       "{L}似乎不太可能。", "答案：{L}（或{M}）", "既不是{L}也不是{M}。", "是{L}吗？",
       "答案：{L}。不过也可能是{M}。"],
"ja": ["{L}だとは思いません。", "{L}ではありません。", "{L}？違うと思う。", "おそらく{L}。", "{L}ですが、自信がない。",
       "{L}または{M}。", "{L}。いや、{M}。", "家が完成した場合のみ{L}。", "{L}：いいえ",
       "{L}かもしれないし、{M}かもしれない。",
       "答えは{L}ではない。", "{L}は考えにくい。", "答え：{L}（または{M}）", "{L}ですか？",
       "答え：{L}。ただし、{M}の可能性もあります。"],
}
TEMPLATES = {"en": EN, **T}


def _label_word(code: str, label: str) -> str:
    return next((w for w, lab in VOCABULARIES["aliases"][code].items() if lab == label), label)


@pytest.mark.parametrize(("code", "template"), [(code, t) for code, ts in TEMPLATES.items() for t in ts])
def test_no_template_is_read(code: str, template: str) -> None:
    lang = language(code)
    read = []
    for a, b in itertools.permutations(VOCABULARIES["labels"], 2):
        text = template.format(L=_label_word(code, a), M=_label_word(code, b))
        label = parse_label(text, VOCABULARIES["labels"], aliases=VOCABULARIES["aliases"][code], lang=lang)[0]
        read += [(text, label)] if label != UNPARSED else []
    for a, b in itertools.permutations("ABCD", 2):
        text = template.format(L=a, M=b)
        label = read_letter(text, VOCABULARIES["options"][code], lang).label
        read += [(text, label)] if label != UNPARSED else []
    assert read == []


REVISED = {
    "en": ["{L}. On reflection, {M}.", "Initially {L}, but after thinking, {M}.", "{L}. Actually, {M}.",
           "Initial answer: {L}\nFinal answer: {M}", "{L}. Wait, on reflection the answer is {M}."],
    "de": ["{L}. Eigentlich {M}."], "fr": ["{L}. En fait, {M}."], "es": ["{L}. En realidad, {M}."],
    "zh": ["{L}。其实是{M}。"], "ja": ["{L}。実は{M}です。"],
}


@pytest.mark.parametrize(("code", "template"), [(code, t) for code, ts in REVISED.items() for t in ts])
def test_a_revision_is_read_as_the_revised_label(code: str, template: str) -> None:
    """Issue 65: these were refused as retractions; a careful reader takes the revision (M)."""
    lang = language(code)
    for a, b in itertools.permutations(VOCABULARIES["labels"], 2):
        text = template.format(L=_label_word(code, a), M=_label_word(code, b))
        label, detail = parse_label(text, VOCABULARIES["labels"], aliases=VOCABULARIES["aliases"][code], lang=lang)
        assert (label, detail.get("rule"), detail.get("superseded")) == (b, "revision", a), text
    for a, b in itertools.permutations("ABCD", 2):
        assert read_letter(template.format(L=a, M=b), VOCABULARIES["options"][code], lang).label == b
