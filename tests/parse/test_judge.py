"""The judge's policy, question and reply (the pass that sends it is ``tests/engine/test_judge.py``)."""

import pytest

from lingdiag.parse.judge import JudgePolicy, question, reply_choice
from lingdiag.records import UNPARSED


def test_policy() -> None:
    url = "openai:m@http://127.0.0.1:1/v1"
    assert JudgePolicy.parse(f"judge:{url}") == JudgePolicy("judge", url)
    assert JudgePolicy.parse("judge-all:smollm2-135m").reads_all
    assert not JudgePolicy.parse("judge:smollm2-135m").reads_all
    for bad in ("judge", "judge:", "judges:x", "rules:x", ""):
        with pytest.raises(ValueError, match="judge-all:SPEC"):
            JudgePolicy.parse(bad)


def test_question_lists_the_choices_and_fences_the_answer() -> None:
    request = question("  B, because it lasts.\n", {"A": "then", "B": "so"})
    system, user = request.messages
    assert system.role == "system" and "do not solve" in system.content
    assert "- A: then\n- B: so" in user.content and "----------\nB, because it lasts.\n----------" in user.content
    assert "exactly one of: A, B" in user.content and request.max_new_tokens == 16
    labels = question("True", {"True": "True", "False": "False"}).messages[1].content
    assert "- True\n- False" in labels


@pytest.mark.parametrize(("reply", "choices", "key"), [
    ("B", {"A": "then", "B": "so"}, "B"), ("**B**", {"A": "then", "B": "so"}, "B"),
    ("The answer is A.", {"A": "then", "B": "so"}, UNPARSED), ("NONE", {"A": "then", "B": "so"}, UNPARSED),
    ("b.", {"A": "then", "B": "so"}, "B"), ("`True`", {"True": "True", "False": "False"}, "True"),
    # a choice at the end of an echoed prompt (SmolLM2's replies as judge) is no reading
    ("Which one choice does this answer commit to? Reply with exactly one of: True, False, Unknown",
     {"True": "True", "False": "False", "Unknown": "Unknown"}, UNPARSED),
    ("- True\n- False\n- Unknown\nUnknown", {"True": "True", "False": "False", "Unknown": "Unknown"}, UNPARSED),
    ("A or B", {"A": "then", "B": "so"}, UNPARSED), ("", {"A": "then"}, UNPARSED),
    ("False", {"True": "True", "False": "False"}, "False"),
    ("maybe True", {"True": "True", "False": "False"}, UNPARSED),
    ("contradiction", {"entailment": "entailment", "contradiction": "contradiction"}, "contradiction"),
])
def test_a_reply_is_exactly_one_choice(reply: str, choices: dict[str, str], key: str) -> None:
    assert reply_choice(reply, choices) == key
