import pytest

from lingdiag.parse.labels import extract_json, parse_label
from lingdiag.records import UNPARSED

LABELS = ("True", "False", "Unknown")

CASES = [
    ("True", "True"),
    ("false", "False"),
    ('"Unknown"', "Unknown"),
    ("**True**", "True"),
    ("  UNKNOWN.\n", "Unknown"),
    ("True. The premise states that the carpenter was building.", "True"),
    ("False - the storm destroyed it", "False"),
    ('{"reasoning": "It was interrupted.", "label": "False"}', "False"),
    ('```json\n{"reasoning": "x", "label": "Unknown"}\n```', "Unknown"),
    ("Sure! {'reasoning': 'process', 'label': 'True'} hope this helps", "True"),
    ('{"possible_interruptions": ["a", "b", "c"], "label": "unknown"}', "Unknown"),
    ('{"reasoning": "He said \\"True\\" but", "label": "False"}', "False"),
    ('{"reasoning": "truncated because the model ran out of tok', UNPARSED),
    ('"reasoning": "abc", "label": "True"', "True"),
    ("The answer is Unknown.", "Unknown"),
    ("Answer: False", "False"),
    ("Let me think.\nThe premise is ambiguous.\nUnknown", "Unknown"),
    ("The premise describes a process.", UNPARSED),
    ("True or False? It depends.", UNPARSED),
    ("Unknown, not True", "Unknown"),  # another label struck out in a clause of its own
    ("Unknown (not True)", "Unknown"),
    ("Unknown, not quite True", UNPARSED),
    ("Truely it is so", UNPARSED),
    ("", UNPARSED),
    ("I cannot answer that.", UNPARSED),
    ('{"label": "Maybe"}', UNPARSED),
    ("Falsehood", UNPARSED),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse_label(text: str, expected: str) -> None:
    assert parse_label(text, LABELS)[0] == expected


def test_aliases_map_words_to_codes() -> None:
    labels = ("0", "1", "2")
    aliases = {"entailment": "0", "neutral": "1", "contradiction": "2"}
    assert parse_label("2", labels, aliases=aliases)[0] == "2"
    assert parse_label("Contradiction.", labels, aliases=aliases)[0] == "2"
    assert parse_label("The relation is neutral", labels, aliases=aliases)[0] == "1"


def test_json_detail_is_kept() -> None:
    label, detail = parse_label('{"reasoning": "r", "label": "True"}', LABELS)
    assert label == "True" and detail["json"]["reasoning"] == "r"


def test_extract_json_skips_non_objects() -> None:
    assert extract_json("a { not json } then {\"k\": 1}") == {"k": 1}
    assert extract_json("no braces") is None


NLI = ("True", "False", "Unknown")


@pytest.mark.parametrize(("text", "label"), [
    # Echoes of the prompt's schema or label list name every label: not an answer.
    ('{"label": "True / False / Unknown"}', UNPARSED),
    ('"label": "True" / "False"', UNPARSED),
    ('{"possible_interruptions": ["x", "y", "z"], "label": "True" or "False"}', UNPARSED),
    # A phrase followed by another label is a change of mind, not an answer.
    ("The answer is True. Actually False.", "False"),  # a revision supersedes the answer
    ("Answer: True (or maybe False)", UNPARSED),
    # The last answer phrase, with labels only before it (reasoning, quotes), is the answer.
    ("Reasoning: it could be True or False. Final answer: False", "False"),
    ('The hypothesis says "True" but the answer is Unknown.', "Unknown"),
    ('{"possible_interruptions": ["a", "b", "c"], "label": "False"}', "False"),
    # Negations never become the negated label.
    ("The answer is not True.", UNPARSED),
    ("Not True", UNPARSED),
])
def test_adversarial_answers_are_not_guessed(text, label):
    assert parse_label(text, NLI)[0] == label
