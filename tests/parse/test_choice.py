"""The option letter of a multiple-choice answer: read by the reader, in any built-in language, a
lower-case letter after a cue a letter (never a KeyError), the article ``a`` none.
"""

import pytest

from lingdiag.parse.choice import parse_letter, read_letter
from lingdiag.parse.labels import language

OPTIONS = {"A": "then", "B": "so", "C": "after", "D": "because"}


@pytest.mark.parametrize(("text", "letter"), [
    ("B", "B"), ("answer: b", "B"), ("The answer is c.", "C"), ("Answer: so", "B"), ("(D) because", "D"),
    ("The answer is a bit ambiguous…", None), ("a", "A"),  # alone, a lower-case letter is one
    ("Antwort: C", "C"), ("答案：C", "C"), ("Réponse : d", "D"), ("答えはBです。", "B"),  # no language given
    ("Answer: B or C", None), ("then or so", None), ("", None),
])
def test_parse_letter(text: str, letter: str | None) -> None:
    assert parse_letter(text, OPTIONS) == letter


def test_letters_keep_the_options_spelling_and_reasons_are_named() -> None:
    assert parse_letter("answer: B", {"a": "x", "b": "y"}) == "b"
    reading = read_letter("Answer: B or C", OPTIONS, language("de"))
    assert (reading.label, reading.detail()) == ("unparsed", {"unparsed": "several-labels"})
    assert read_letter("Die richtige Antwort ist B.", OPTIONS, language("de")).detail() == {"rule": "cue"}


@pytest.mark.slow
def test_explicas_published_answers_get_no_letter_the_authors_cleaning_did_not(shared_datasets):
    """GPT-4o-mini's 9,600 multiple-choice answers in ExpliCa's released files (50 tokens each,
    mostly an echoed option list cut off): where the authors' cleaning read a letter the reader reads
    the same or none, and where it read none the reader reads none (a cut-off list's last line,
    ``- D.``, once read as D in 2,576 of them).
    """
    import ast
    import csv

    seen = same = refused = 0
    for path in sorted((shared_datasets / "explica_results" / "mc").glob("*/*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                options = ast.literal_eval(row["answers_dict"])
                ours = parse_letter(row["generated_answer_normal"], options)
                theirs = row["answer_greedy_cleaned"] if row["answer_greedy_cleaned"] in options else None
                seen += 1
                same += ours == theirs
                refused += ours is None and theirs is not None
    assert seen == 9600 and same == 9600 - refused and refused <= 16
