"""The reader's first stage: wrapping comes off, what the answer says stays."""

import pytest

from lingdiag.parse.labels import ENGLISH
from lingdiag.parse.language import reading_words
from lingdiag.parse.normalise import normalise

CUES = reading_words(ENGLISH).cues


@pytest.mark.parametrize(("text", "plain"), [
    ("**Answer:** False", "Answer: False"),
    ("### Final Answer\n\nUnknown", "Final Answer: Unknown"),  # a cue-only line joins the next
    ("**Final Answer:**\nTrue", "Final Answer: True"),
    ("$\\boxed{True}$", "Final answer: True"),
    ("The answer is \\boxed{\\text{Unknown}}.", "The answer is\nFinal answer: Unknown."),
    ("Ｔｒｕｅ：ｙｅｓ", "True:yes"),  # NFKC
    ("对\u200b不起\u200f", "对不起"),  # zero-width and bidi marks are no text
    ("True<|eot_id|>", "True"),
    ("It isn’t “True”.", 'It is not "True".'),  # contractions expanded, typographic quotes plain
    ("I'd say it's B, I'm sure", "I would say it is B, I am sure"),
    ("- True\n* False\n• Unknown", "True\nFalse\nUnknown"),  # bullets
    ("1. The premise says so.\n2. True\n3.", "The premise says so.\nTrue\n3."),  # list numbers; a lone "3." stays
    ("> quoted\n>> twice", "quoted\ntwice"),
    ("<b>True</b><br>because", "True\nbecause"),
    ("Reasoning.\n<answer>\nFalse\n</answer>", "Reasoning.\nFinal answer: False"),  # a short tagged answer
    ("<ANSWER>not True</ANSWER>", "Final answer: not True"),  # what it says stays, a negation too
    ("<answer>He ran, so the label is True.\nSure.</answer>", "He ran, so the label is True.\nSure."),
    ("json_key stays, __x__ goes", "json_key stays, x goes"),
    ("   \n\n\t  \n", ""),
    # a one-row table's answer column is a final-answer line, its other cells "header: cell"
    ("| Premise | Label |\n|---|:---:|\n| He ran. | **False** |", "Premise: He ran.\nFinal answer: False"),
    ("| 标签 | 理由 |\n|---|---|\n| 不确定 | 没有说明 |", "Final answer: 不确定\n理由: 没有说明"),
    *((table, table) for table in ("| Label | Why |\n|---|---|\n| True | a |\n| False | b |",  # several rows
                                   "| Option | Correct? |\n|---|---|\n| A | no |")),  # no answer column
    ("no completion => Unknown; x -> y; a <- b", "no completion → Unknown; x → y; a <- b"),  # ASCII arrows are arrows
    ("True ❌\nUnknown ✅", "True no\nUnknown"),  # a cross says no, a check mark confirms
])
def test_normalise(text: str, plain: str) -> None:
    assert normalise(text, CUES) == plain


def test_a_cue_line_at_the_end_stays() -> None:
    assert normalise("Reasoning.\n**Answer:**", CUES) == "Reasoning.\nAnswer"
