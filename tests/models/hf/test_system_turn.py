"""Chat templates that refuse a system turn (Gemma-2 style), on a real tokenizer and model.

The embedded SmolLM2's files are linked into a temporary directory whose
``tokenizer_config.json`` carries a template that raises on a system role, as Gemma-2's
does; it is loaded through the ordinary ``hf:<dir>`` spec. No part of the model is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import smollm2_with_template

from lingdiag.models.hf.load import fold_system
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, GenerationRequest

# Gemma-2's system check and role alternation, with ChatML markers SmolLM2 knows.
REFUSING_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SYSTEM = "You are a strict logician. Answer True, False or Unknown."
USER = "Premise: Ann was baking a cake. Hypothesis: Ann baked a cake."
REQUEST = GenerationRequest(messages=(ChatMessage("system", SYSTEM), ChatMessage("user", USER)), max_new_tokens=4)


def test_fold_system_prepends_the_system_text_to_the_first_user_turn() -> None:
    turns = (ChatMessage("system", "S"), ChatMessage("user", "U1"), ChatMessage("assistant", "A"),
             ChatMessage("user", "U2"))
    assert fold_system(turns) == (ChatMessage("user", "S\n\nU1"), ChatMessage("assistant", "A"),
                                  ChatMessage("user", "U2"))
    assert fold_system((ChatMessage("user", "U"),)) == (ChatMessage("user", "U"),)


@pytest.fixture(scope="module")
def refusing_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded SmolLM2's files, with a chat template that refuses system turns."""
    return smollm2_with_template(tmp_path_factory, REFUSING_TEMPLATE)


def backend(directory: Path, **options: Any) -> Any:
    """The ``hf:<directory>`` backend with ``--model-option`` values ``options``."""
    return load_backend(f"hf:{directory}", options)


@pytest.mark.slow
def test_refused_system_turn_falls_back_to_plain_text(refusing_dir: Path) -> None:
    b = backend(refusing_dir)
    tokenizer = b.tokenizer
    with pytest.raises(Exception, match="System role not supported"):
        tokenizer.apply_chat_template([{"role": "system", "content": SYSTEM}], tokenize=False)
    assert b.render(REQUEST) == SYSTEM + "\n\n" + USER
    ids, rendering = b.loaded.encode(REQUEST)
    assert rendering == "plain-fallback"
    # Tokenized with the tokenizer's special tokens, as the authors' code did.
    assert ids == tokenizer(SYSTEM + "\n\n" + USER)["input_ids"]
    if tokenizer.bos_token_id is not None and tokenizer(".")["input_ids"][0] == tokenizer.bos_token_id:
        assert ids[0] == tokenizer.bos_token_id
    (answer,) = b.generate([REQUEST])
    assert answer.error is None and answer.n_tokens >= 1 and answer.rendering == "plain-fallback"
    assert b.usage()["rendered_plain_fallback"] == 1
    assert "system_turn" not in b.identity  # the default keeps the identity (and cache keys) as before


@pytest.mark.slow
def test_fold_option_renders_one_user_turn_inside_the_template(refusing_dir: Path) -> None:
    b = backend(refusing_dir, system_turn="fold")
    expected = f"<|im_start|>user\n{SYSTEM}\n\n{USER}<|im_end|>\n<|im_start|>assistant\n"
    assert b.render(REQUEST) == expected
    ids, rendering = b.loaded.encode(REQUEST)
    assert rendering == "folded"
    assert ids == b.tokenizer(expected, add_special_tokens=False)["input_ids"]  # the template holds the markup
    (answer,) = b.generate([REQUEST])
    assert answer.error is None and answer.rendering == "folded"
    assert b.usage()["rendered_folded"] == 1 and "rendered_plain_fallback" not in b.usage()
    assert b.identity["system_turn"] == "fold" and b.identity != backend(refusing_dir).identity


@pytest.mark.slow
def test_requests_without_a_system_turn_use_the_template(refusing_dir: Path) -> None:
    b = backend(refusing_dir)
    request = GenerationRequest(messages=(ChatMessage("user", USER),), max_new_tokens=2)
    assert b.render(request) == f"<|im_start|>user\n{USER}<|im_end|>\n<|im_start|>assistant\n"
    assert b.loaded.encode(request)[1] is None


@pytest.mark.slow
def test_templates_that_accept_system_turns_are_unchanged(smollm2: Any) -> None:
    (answer,) = smollm2.generate([REQUEST])
    assert answer.rendering is None and not any(k.startswith("rendered_") for k in smollm2.usage())
    assert smollm2.render(REQUEST).startswith("<|im_start|>system\n" + SYSTEM)


@pytest.mark.slow
def test_the_rendering_reaches_items_and_meta(refusing_dir: Path, tmp_path: Path) -> None:
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import evaluate

    cfg = RunConfig(suite="imperfective", model=f"hf:{refusing_dir}", axes={"strategy": ["zero-shot"]}, limit=2,
                    options={"max_new_tokens": 3})
    evaluate(cfg, backend(refusing_dir), tmp_path / "run")
    records = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for r in records:
        (output,) = r["outputs"]
        assert output["rendering"] == "plain-fallback" and isinstance(output["text"], str)
        assert r["prompts"][0][0]["content"].startswith("System Prompt: ")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["usage"]["rendered_plain_fallback"] == 2
