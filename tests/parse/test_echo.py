"""Lists of labels or options are no answer; an invented next item is read up to its start."""

import pytest

from lingdiag.parse import echo
from lingdiag.parse.language import ENGLISH, language, reading_words
from lingdiag.parse.scan import Vocabulary, scan

NLI = Vocabulary.of_labels(("True", "False", "Unknown"), {"对": "True", "错": "False"})
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})


def listed(text: str, vocab: Vocabulary = NLI, code: str = "en") -> list[str]:
    s = scan(text, vocab, reading_words(language(code)))
    return sorted(s.text[t.start:t.end] for t in echo.listed(s, vocab))


@pytest.mark.parametrize(("text", "found"), [
    ("True, False, or Unknown", ["False", "True", "Unknown"]),
    ("(True / False / Unknown)", ["False", "True", "Unknown"]),
    ("neither True nor False", ["False", "True"]),
    ("True\nFalse\nUnknown", ["False", "True", "Unknown"]),
    ("True: no\nFalse: yes", ["False", "True"]),  # items, one line each
    ("True, not False", []),  # a denial is no list
    ("True. False.", []),  # two sentences
    ("True or True", []),  # one label
    ("True\nThe premise: False", []),
])
def test_label_lists(text: str, found: list[str]) -> None:
    assert listed(text) == found


def test_lists_in_a_script_without_spaces() -> None:
    assert listed("对还是错？", code="zh") == ["对", "错"]


@pytest.mark.parametrize(("text", "found"), [
    ("A) in an hour B) for an hour C) at noon", ["A", "B", "C"]),
    ("A. in an hour\nB. for an hour", ["A", "B"]),
    ("B\nA: would need an endpoint\nC: is a time point", ["A", "C"]),  # the lone B is another shape
    # An echo cut off by the token cap (ExpliCa's GPT-4o-mini answers): the lone D is its last item.
    ("3. Words:\n- A. because\n- B. so\n- C. then\n- D.", ["A", "B", "C", "D"]),
    ("A. in an hour\nB. for an hour\nB", ["A", "B"]),  # a letter the list holds, alone after it: an answer
    ("Answer: B or C", ["B", "C"]),
    ("B. A is wrong.", []),
])
def test_option_lists(text: str, found: list[str]) -> None:
    assert listed(text, ABCD) == found


def test_an_invented_item_is_found_after_the_answer_only() -> None:
    words = reading_words(ENGLISH)
    s = scan("Premise: he ran.\nAnswer: True\n\nPremise: she swam.\nAnswer: False", NLI, words)
    first_answer = s.text.index("True")
    cut = echo.invented_item(s, first_answer)
    assert cut == s.text.index("Premise: she")
    assert echo.cut(s, cut).text == "Premise: he ran.\nAnswer: True"
    assert echo.invented_item(s, len(s.text) - 1) is None
    q = scan("True\nQuestion 2: is it?", NLI, words)
    assert echo.invented_item(q, 0) == q.text.index("Question")
