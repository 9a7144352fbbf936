"""The ``authors`` prompts equal, byte for byte, what the authors' ``run_inference.py`` builds.

The expected texts are computed from the reference file itself (its ``PROMPT_TEMPLATES``
read with ``ast``), so any drift of ``prompts_authors.yaml`` from it fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from lingdiag.records import Item
from lingdiag.suite import Dataset
from lingdiag.suites.imperfective import Options, conditions, data
from lingdiag.suites.imperfective.prompts import STRATEGIES

REFERENCE = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "imperfective" / "run_inference.py"


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, str]]:
    """``PROMPT_TEMPLATES`` of the authors' script, evaluated as a literal (the script is not run)."""
    if not REFERENCE.is_file():
        pytest.skip(f"the authors' run_inference.py is not available at {REFERENCE}")
    for node in ast.parse(REFERENCE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROMPT_TEMPLATES"
                                                for t in node.targets):
            value: dict[str, dict[str, str]] = ast.literal_eval(node.value)
            return value
    raise AssertionError(f"no PROMPT_TEMPLATES in {REFERENCE}")


@pytest.fixture(scope="module")
def official_items(shared_datasets: Path) -> list[Item]:
    """Items spread over the four groups of the official file."""
    items = data.load_json(shared_datasets / "imperfective_nli" / "imperfectiveNLI.json")
    return items[::57]


def expected(templates: dict[str, dict[str, str]], name: str, item: Item) -> list[dict[str, str]]:
    """The messages ``prepare_prompt`` builds for ``item`` (system, then the formatted user turn)."""
    t = templates[name]
    user = t["user_format"].format(premise=item.fields["premise"], hypothesis=item.fields["hypothesis"])
    return [{"role": "system", "content": t["system"]}, {"role": "user", "content": user}]


def sent(name: str, item: Item, **options: Any) -> list[dict[str, str]]:
    """The messages the default (``authors``) condition ``name`` sends for ``item``."""
    (cond,) = conditions(Dataset("official", [item]), {"strategy": [name]}, Options(**options), seed=0)
    (request,) = cond.strategy.render(item)
    return [{"role": m.role, "content": m.content} for m in request.messages]


def test_reference_has_exactly_our_strategies(templates: dict[str, dict[str, str]]) -> None:
    assert tuple(templates) == STRATEGIES


@pytest.mark.parametrize("name", STRATEGIES)
def test_authors_messages_equal_the_reference(templates: dict[str, dict[str, str]], official_items: list[Item],
                                             name: str) -> None:
    assert len(official_items) >= 4 and {i.tags["group"] for i in official_items} == set("ABCD")
    for item in official_items:
        assert sent(name, item) == expected(templates, name, item)
        assert sent(name, item, prompt_source="authors") == expected(templates, name, item)


@pytest.mark.parametrize("name", STRATEGIES)
def test_paper_messages_differ_from_the_reference(templates: dict[str, dict[str, str]], official_items: list[Item],
                                                 name: str) -> None:
    item = official_items[0]
    ours = sent(name, item, prompt_source="paper")
    assert ours != expected(templates, name, item)
    assert item.fields["premise"] in ours[1]["content"] and not ours[0]["content"].startswith("System Prompt:")


@pytest.mark.slow
def test_authors_prompt_renders_as_the_reference_did(templates: dict[str, dict[str, str]],
                                                     official_items: list[Item], smollm2: Any) -> None:
    """The chat-templated text equals ``apply_chat_template`` over the reference's messages."""
    tokenizer = smollm2.tokenizer
    for name in STRATEGIES:
        item = official_items[1]
        (cond,) = conditions(Dataset("official", [item]), {"strategy": [name]}, Options(), seed=0)
        (request,) = cond.strategy.render(item)
        reference = tokenizer.apply_chat_template(expected(templates, name, item), tokenize=False,
                                                  add_generation_prompt=True)
        assert smollm2.render(request) == reference
