"""Surprisal per token from a record's per-token log-probs: bits, SyntaxGym regions, a pair's differing words."""

from __future__ import annotations

import math
from dataclasses import replace

from helpers import item_record

from lingdiag.records import output_from_json
from lingdiag.view.surprisal import scored


def test_syntaxgym_tokens_fall_in_their_regions() -> None:
    record = item_record("1", "pass", "pass")
    # Stored with sorted keys, while the requests follow the suite's order: matched by text, not position.
    conditions = {"match": ["The", "author", "is"], "mismatch": ["The", "author", "are"]}
    record = replace(record, fields={"conditions": conditions, "region_numbers": {"match": ["1", "2", "3"],
                                                                                 "mismatch": ["1", "2", "7"]}},
                     prompts=[{"context": "", "continuation": "The author are"},
                              {"context": "", "continuation": "The author is"}],
                     outputs=[output_from_json({"logprob": -7.0, "token_logprobs": [-1.0, -2.0, -4.0],
                                                "token_spans": [[0, 3], [3, 10], [10, 14]]}),
                              output_from_json({"logprob": -6.0, "token_logprobs": [-1.0, -2.0, -3.0],
                                                "token_spans": [[-1, 3], [3, 10], [10, 13]]})])
    texts = scored(record)
    assert [t.name for t in texts] == ["mismatch", "match"]
    assert [round(t.bits, 9) for t in texts[1].tokens] == [round(v / math.log(2), 9) for v in (1.0, 2.0, 3.0)]
    assert [t.region for t in texts[0].tokens] == [0, 1, 2]
    assert texts[0].regions[2] == (11, 14, "7")
    assert [texts[1].text[a:b] for a, b, _ in texts[1].regions] == ["The", "author", "is"]
    assert not any(t.differs for t in texts[0].tokens)  # regions, not a pair's diff


def test_a_minimal_pair_marks_the_differing_word() -> None:
    record = replace(item_record("p", "good", "good"),
                     prompts=[{"context": "", "continuation": "The keys are here"},
                              {"context": "", "continuation": "The keys is here"}],
                     outputs=[output_from_json({"logprob": -4.0, "token_logprobs": [-1.0] * 4,
                                                "token_spans": [[0, 3], [3, 8], [8, 12], [12, 17]]}),
                              output_from_json({"logprob": -4.0, "token_logprobs": [-1.0] * 4,
                                                "token_spans": [[0, 3], [3, 8], [8, 11], [11, 16]]})])
    first, second = scored(record)
    assert [t.differs for t in first.tokens] == [False, False, True, False]
    assert [second.text[t.start:t.end] for t in second.tokens if t.differs] == [" is"]


def test_records_without_per_token_log_probs_have_none() -> None:
    record = replace(item_record("x", "a", "a"), prompts=[{"context": "", "continuation": "x"}],
                     outputs=[output_from_json({"logprob": -1.0, "n_tokens": 1, "is_greedy": True})])
    assert scored(record) == []


def test_syntaxgym_without_per_token_shows_its_recorded_region_surprisals() -> None:
    record = replace(item_record("1", "pass", "pass"),
                     fields={"conditions": {"match": ["The", "", "author", "is"]}},
                     detail={"surprisal_bits": {"match": [3.5, 0.0, 9.25, 2.0]}},
                     outputs=[output_from_json({"logprob": -6.0, "n_tokens": 3, "is_greedy": False})])
    (text,) = scored(record)
    assert text.per_region and text.text == "The author is"
    assert [(text.text[t.start:t.end], t.bits) for t in text.tokens] == [("The", 3.5), ("author", 9.25), ("is", 2.0)]
    assert [n for _, _, n in text.regions] == ["1", "3", "4"]  # the empty region 2 adds nothing
