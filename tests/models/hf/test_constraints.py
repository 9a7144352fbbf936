import json
import re

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.hf import constraints
from lingdiag.records import ChatMessage, Constraint, GenerationRequest

pytestmark = pytest.mark.skipif(not constraints.available(), reason="xgrammar is not installed")

PROMPTS = [
    "Rate the sentence 'The ice melted, so the floor got wet.' from 1 to 10.",
    "Which word links these two events best: so, because, then or after? First: it rained. Second: the street "
    "was wet. Answer with a word, and please think about it carefully before answering the question.",
    "Pick A, B, C or D.",
]


def ask(backend, constraint, prompts=PROMPTS, max_new_tokens=12):
    reqs = [GenerationRequest(messages=(ChatMessage("user", p),), max_new_tokens=max_new_tokens,
                              constraint=constraint) for p in prompts]
    return backend.generate(reqs)


@pytest.mark.parametrize(("choices", "expected"), [
    (("so", "because"), 'root ::= "so" | "because"'),
    (('say "hi"', "a\\b"), 'root ::= "say \\"hi\\"" | "a\\\\b"'),
])
def test_choice_grammar_escapes_literals(choices, expected):
    assert constraints.choice_grammar(choices) == expected


def test_choice_grammar_rejects_empty():
    with pytest.raises(ConfigError):
        constraints.choice_grammar(())
    with pytest.raises(ConfigError):
        constraints.choice_grammar(("so", ""))


@pytest.mark.slow
def test_backend_declares_constrained(smollm2):
    assert smollm2.capabilities.constrained is True


@pytest.mark.slow
@pytest.mark.parametrize("choices", [
    tuple(str(k) for k in range(1, 11)),
    ("so", "because", "then", "after"),
    ("A", "B", "C", "D"),
])
def test_choice_constraint_only_produces_listed_answers(smollm2, choices):
    # Prompts of different lengths: left padding must not disturb any row.
    outs = ask(smollm2, Constraint("choice", choices=choices))
    assert [o.text in choices for o in outs] == [True] * len(PROMPTS), [o.text for o in outs]


@pytest.mark.slow
def test_regex_and_json_schema_constraints(smollm2):
    outs = ask(smollm2, Constraint("regex", pattern=r"[0-9]{2}-[a-z]{3}"))
    assert all(re.fullmatch(r"[0-9]{2}-[a-z]{3}", o.text) for o in outs), [o.text for o in outs]
    schema = json.dumps({"type": "object", "properties": {"rating": {"type": "integer", "minimum": 1,
                                                                     "maximum": 10}},
                         "required": ["rating"], "additionalProperties": False})
    outs = ask(smollm2, Constraint("json_schema", schema=schema), PROMPTS[:1], max_new_tokens=40)
    assert isinstance(json.loads(outs[0].text)["rating"], int), outs[0].text


@pytest.mark.slow
def test_batch_rows_are_independent(smollm2):
    c = Constraint("choice", choices=("so", "because", "then", "after"))
    batched = [o.text for o in ask(smollm2, c)]
    alone = [ask(smollm2, c, [p])[0].text for p in PROMPTS]
    assert batched == alone


def test_greedy_constraint_keys_are_unchanged_by_sampling():
    # Cache keys of greedy constrained requests are what they were before sampling existed.
    greedy = GenerationRequest(prompt="x", constraint=Constraint("choice", choices=("a", "b")))
    sampled = GenerationRequest(prompt="x", constraint=Constraint("choice", choices=("a", "b"), sample_seed=1))
    assert "sample_seed" not in greedy.key()["constraint"] and sampled.key()["constraint"]["sample_seed"] == 1


@pytest.mark.slow
def test_sampled_choice_is_valid_seeded_and_independent_of_the_batch(smollm2):
    choices = tuple(str(k) for k in range(1, 11))
    prompts = [f"{p} (variant {k})" for k in range(4) for p in PROMPTS]

    def sample(seed, rows):
        return [o.text for o in ask(smollm2, Constraint("choice", choices=choices, sample_seed=seed), rows)]

    first = sample(7, prompts)
    assert all(t in choices for t in first), first
    assert sample(7, prompts) == first  # same seed, same answers
    assert [sample(7, [p])[0] for p in prompts[:3]] == first[:3]  # a row's draw does not depend on its batch
    assert sample(8, prompts) != first  # another seed draws differently somewhere among 12 rows
    greedy = [o.text for o in ask(smollm2, Constraint("choice", choices=choices), prompts)]
    assert greedy != first  # sampling, not the best token
