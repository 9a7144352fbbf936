"""Weighed options, then an answer (``lingdiag.parse.weigh``): the final answer after a discussion
of the labels is read when the discussion commits to nothing else; a discussion that takes another
label, or a final answer doubted, commits to nothing.
"""

import pytest

from lingdiag.parse.labels import language, parse_label
from lingdiag.parse.reader import read
from lingdiag.parse.scan import Vocabulary, scan
from lingdiag.parse.weigh import AGAINST, FOR, WEIGHED, stances
from lingdiag.records import UNPARSED

NLI = ("True", "False", "Unknown")
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})


@pytest.mark.parametrize(("text", "label"), [
    ("True: no. False: no. Unknown: yes.\n\nAnswer: Unknown", "Unknown"),
    ("Considering True: unlikely. Considering False: also unlikely. Therefore the answer is Unknown.", "Unknown"),
    ("- **True** would require the premise to say he finished.\n- **False** would require it to deny it.\n"
     "- **Unknown**: the premise is silent.\n\n**Answer: Unknown**", "Unknown"),
    ("We can rule out True and False, which leaves Unknown.", "Unknown"),
    # the discussion commits to another label, or against the final one: nothing
    ("True fits best here.\n\nAnswer: Unknown", UNPARSED),
    ("True: no. False: yes.\n\nAnswer: Unknown", UNPARSED),
    ("True: no. False: no. Unknown: no.\n\nAnswer: Unknown", UNPARSED),
    ("True. The premise says he was building it.\n\nAnswer: False", UNPARSED),
    ("Is it True? Yes. Is it False? No.\n\nAnswer: Unknown", UNPARSED),
    ("**True**\nThe premise does not say he finished.\n**False**\nNothing contradicts it.\n**Unknown**\n"
     "This fits best.\n\n**Answer: False**", UNPARSED),
    # peers take the last mention here; the list took Unknown
    ("- True: possible but not entailed.\n- False: not supported.\n- Unknown: best fits.\n\nAnswer: True", UNPARSED),
    # a final answer doubted, questioned or hedged commits to nothing
    ("True: no. False: no. Unknown: yes.\n\nAnswer: Unknown?", UNPARSED),
    ("True: no. False: no. Unknown: yes.\n\nAnswer: Unknown, but I am not sure.", UNPARSED),
    ("True: no. False: no. Unknown: yes.\n\nAnswer: probably Unknown", UNPARSED),
    ("True: no. False: no. If anything, the answer is Unknown.", UNPARSED),  # its sentence's clauses count
    ("True: no. False: no. Probably, the answer is Unknown.", UNPARSED),
    ("Probably, the answer is Unknown.", UNPARSED),  # a short clause hedging the one after it
    ("True: no. False: no. Unknown: yes.\nAnswer: Unknown\nAnswer: False", UNPARSED),
    ("The premise leaves True open.", UNPARSED),
    ("True ❌\nFalse ❌\nUnknown ✅\n\nAnswer: Unknown", "Unknown"),
    ("True ✅\nFalse ❌\nUnknown ❌\n\nAnswer: Unknown", UNPARSED),
    ("True ❌\nFalse ❌\nUnknown ❌\n\nAnswer: Unknown", UNPARSED),
    ("| Correct answer | Why |\n|---|---|\n| Unknown | not stated |", "Unknown"),
])
def test_a_final_answer_after_a_discussion(text: str, label: str) -> None:
    assert parse_label(text, NLI)[0] == label


@pytest.mark.parametrize(("text", "code"), [
    ("Option A: telic, does not fit. Option B: durative, fits. Option C: a point in time, no.\n\nAnswer: B", "en"),
    ("A passt nicht, weil es einen Abschluss ausdrückt. C und D sind Zeitpunkte. Damit bleibt nur B.", "de"),
    ("A ne convient pas. C et D sont des moments précis. Il ne reste donc que B.", "fr"),
    ("La A no encaja. La C y la D son momentos puntuales. Solo queda la B.", "es"),
    ("A表示完成，不合适。C和D是时间点，也不合适。剩下的是B。", "zh"),
    ("Aは完了を表すので不適切です。CとDは時点なので合いません。残るのはBです。", "ja"),
])
def test_an_elimination_leaves_its_answer_in_every_built_in_language(text: str, code: str) -> None:
    assert read(text, ABCD, language(code)).label == "B"


def test_a_weighed_answer_names_its_rule() -> None:
    label, detail = parse_label("A: incorrect\nB: correct\nC: incorrect\nD: incorrect\n\nFinal answer: B",
                                ["A", "B", "C", "D"])
    assert (label, detail) == ("B", {"rule": "weighed"})


def test_each_mention_of_a_discussion_takes_a_stance() -> None:
    text = ("True? No.\nFalse – wrong.\nUnknown: the premise does not say.\n"
            "True would require completion. The answer is True.")
    vocab = Vocabulary.of_labels(NLI)
    s = scan(text, vocab, language("en"))
    assert [(text[m.start:m.end], taken) for m, taken in stances(s, vocab)] == [
        ("True", AGAINST), ("False", AGAINST), ("Unknown", WEIGHED), ("True", WEIGHED), ("True", FOR)]
