"""The reader as a whole: its JSON stage, the rule that located each label, and answers that
cannot stop it (huge, hostile, half-written).
"""

import time

import pytest

from lingdiag.parse.labels import parse_label
from lingdiag.parse.reader import RULES, Reading, json_answer, read
from lingdiag.parse.scan import Vocabulary
from lingdiag.records import UNPARSED

NLI = Vocabulary.of_labels(("True", "False", "Unknown"))
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})


@pytest.mark.parametrize(("text", "lines", "used"), [
    ('{"reasoning": "r", "label": "False"}', "Final answer: False", True),
    ("```json\n{\"label\": \"True\"}\n```\nDone.", "Final answer: True", True),
    ("{'label': 'Unknown'}", "Final answer: Unknown", True),
    ('{"answer": "B", "why": 3}', "answer: B\nwhy: 3", False),  # no label key: each plain value a line
    ('{"label": {"nested": 1}}', "", False),
    ('{"reasoning": "cut off', None, False),
])
def test_json_stage(text: str, lines: str | None, used: bool) -> None:
    out, from_json = json_answer(text, "label")
    assert from_json is used
    assert out == text if lines is None else lines in out


RULED = [
    ('{"label": "False"}', NLI, "json"), ("Answer: True", NLI, "cue"), ("The hypothesis is true.", NLI, "subject"),
    ("Unknown", NLI, "whole-answer"), ("Let me see.\nFalse", NLI, "line"), ("True. It follows.", NLI, "leading"),
    ("I think B is correct.", ABCD, "affirmed"), ("After careful consideration: Unknown.", NLI, "colon"),
    ("True. Actually, False.", NLI, "revision"),
    ("True: no. False: no. Unknown: yes.\n\nAnswer: Unknown", NLI, "weighed"),
]


@pytest.mark.parametrize(("text", "vocab", "rule"), RULED)
def test_every_rule_is_documented_and_reached(text: str, vocab: Vocabulary, rule: str) -> None:
    reading = read(text, vocab)
    revision = {"superseded": "True"} if rule == "revision" else {}
    assert reading.rule == rule and reading.detail() == {"rule": rule, **revision}
    assert {r for _, _, r in RULED} == set(RULES)


def test_an_unparsed_reading_names_its_reason_only() -> None:
    assert Reading(UNPARSED, reason="hedged").detail() == {"unparsed": "hedged"}
    label, detail = parse_label("Maybe True", ("True", "False"))
    assert (label, detail) == (UNPARSED, {"unparsed": "hedged"})


@pytest.mark.parametrize("text", [
    "{" * 20000, "[" + "True, " * 5000, "a" * 200000, "True\n" * 3000 + "False", "\x00\x01\ufffd" * 1000,
    "<script>alert(1)</script> True", "A) " * 3000, "答案：" * 5000 + "对",
    "\n" * 100000 + "True", " \n" * 50000 + "> True", "<answer>" * 20000 + "True",  # blank lines: 9 s per 20,000
])
def test_no_answer_stops_or_stalls_the_reader(text: str) -> None:
    start = time.perf_counter()
    for vocab in (NLI, ABCD):
        assert isinstance(read(text, vocab).label, str)
    assert time.perf_counter() - start < 20  # generous: 2 shared cores; a quadratic blow-up takes minutes
