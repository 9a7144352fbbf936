"""Tokens of an answer: label mentions found by their own edges, choice letters standing as
letters, the longest word winning, sentences and clauses.
"""

import pytest

from lingdiag.parse.language import ENGLISH, PUNCTUATION, language, reading_words
from lingdiag.parse.reader import read
from lingdiag.parse.scan import Vocabulary, scan
from lingdiag.records import UNPARSED

NLI = Vocabulary.of_labels(("True", "False", "Unknown"))
ZH = Vocabulary.of_labels(("True", "False", "Unknown"), {"对": "True", "错": "False", "不确定": "Unknown"})
JA = Vocabulary.of_labels(("True", "False", "Unknown"), {"正しい": "True", "誤り": "False", "不明": "Unknown"})
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})


def mentions(text: str, vocab: Vocabulary, code: str = "en") -> list[tuple[str, str | None]]:
    s = scan(text, vocab, reading_words(language(code)))
    return [(text[t.start:t.end], t.label) for t in s.mentions]


@pytest.mark.parametrize(("text", "found"), [
    ("True", [("True", "True")]),
    ("Truely, falsehood", []),  # a Latin edge needs a word boundary
    ("an unknown person was true", [("true", "True")]),  # between a determiner and a noun: an adjective
    ("the answer is not true that", [("true", "True")]),
])
def test_label_words(text: str, found: list[tuple[str, str]]) -> None:
    assert mentions(text, NLI) == found


@pytest.mark.parametrize(("text", "found"), [
    ("答案是对的", [("对", "True")]),  # a particle may follow
    ("对不起，对于这个问题", []),  # another word follows: no label
    ("对；不对。", [("对", "True")]),  # 不对 is a word of its own (a retraction), not a mention of 对
    ("对还是错", [("对", "True"), ("错", "False")]),  # a joiner may follow
    ("答案是错误的", []),  # 错误 is another word
    ("我不确定", []),  # the doubt, longer than the label 不确定
    ("不确定。", [("不确定", "Unknown")]),
])
def test_labels_in_a_script_without_spaces(text: str, found: list[tuple[str, str]]) -> None:
    assert mentions(text, ZH, "zh") == found


def test_japanese_label_edges() -> None:
    assert mentions("正しいです。誤りかもしれません", JA, "ja") == [("正しい", "True"), ("誤り", "False")]
    assert mentions("正しくない", JA, "ja") == []


@pytest.mark.parametrize(("text", "letters"), [
    ("A", ["A"]), ("(B)", ["B"]), ("B) for an hour", ["B"]), ("C.", ["C"]), ("选C", ["C"]), ("答えはBです", ["B"]),
    ("A good case", []),  # the article
    ("A is correct", ["A"]), ("A or B", ["A", "B"]), ("A in an hour", ["A"]),  # a letter says, or its option follows
    ("Sentence A and event B", []),  # a plain word names them
    ("is A, la C", ["A", "C"]),  # after a word of the language or an article
    ("hour B) for", ["B"]),  # an option's marker
    ("(b) and b)", ["B", "B"]),  # lower case in brackets only
    ("a b c", []),
])
def test_choice_letters(text: str, letters: list[str]) -> None:
    assert [label for _, label in mentions(text, ABCD)] == letters


def test_longest_word_wins_and_kinds_are_named() -> None:
    s = scan("I am not sure; no doubt it is not correct", NLI, reading_words(ENGLISH))
    assert [(s.text[t.start:t.end], sorted(t.kinds)) for t in s.tokens] == [
        ("not sure", ["doubts"]), ("no doubt", ["affirmations"]), ("it", ["subjects"]), ("is", ["copulas"]),
        ("not correct", ["judgements"])]


def test_sentences_and_clauses() -> None:
    s = scan("True, because e.g. 3.5 is... fine. False? No", NLI, reading_words(ENGLISH))
    assert [s.text[a:b] for a, b, _ in s.sentences] == ["True, because e.g. 3.5 is... fine", " False", " No"]
    assert [mark for _, _, mark in s.sentences] == [".", "?", ""]
    assert s.clause(0) == (0, 4) and s.sentence(s.text.index("No")) == (s.text.index(" No"), len(s.text))


SCRIPT_MARKS = [(p.script, kind, mark) for p in PUNCTUATION
                for kind, marks in (("sentence", p.sentence), ("clause", p.clause), ("question", p.question))
                for mark in marks]


@pytest.mark.parametrize(("script", "kind", "mark"), SCRIPT_MARKS)
def test_every_scripts_marks_end_what_they_end(script: str, kind: str, mark: str) -> None:
    vocab = Vocabulary.of_labels(("True", "False", "Unknown"))
    text = f"True{mark} the premise says so"
    s = scan(text, vocab, reading_words(ENGLISH))
    end = text.index(mark)
    assert s.clause(0) == (0, end), script
    if kind in ("sentence", "question"):
        assert s.sentence(0) == (0, end), script
    else:
        assert s.sentence(0) == (0, len(text)), script
    if kind == "question":
        assert read(f"Answer: True{mark}", vocab).reason == "questioned", script
        assert read(f"True{mark}", vocab).label == UNPARSED, script


def test_a_greek_question_mark_asks_though_nfkc_makes_it_a_semicolon() -> None:
    vocab = Vocabulary.of_labels(("True", "False", "Unknown"))
    assert read("Answer: True\u037e", vocab).reason == "questioned"
    assert read("Answer: True; the premise says so.", vocab).label == "True"


def test_an_arabic_comma_ends_the_clause_before_a_correction() -> None:
    vocab = Vocabulary.of_labels(("True", "False", "Unknown"), {"صحيح": "True", "خطأ": "False"})
    assert read("الإجابة: خطأ، لا، صحيح", vocab).label == UNPARSED
    assert read("صحيح؟", vocab).label == UNPARSED
