"""Steering vectors on the embedded SmolLM2-135M: deterministic, in the identity, inert at α=0."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingdiag.adapt.examples import chat_examples, contrast_pairs
from lingdiag.adapt.steer import save_vectors, steering_vectors
from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.errors import ConfigError
from lingdiag.models.cache import ResponseCache
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.suites.imperfective.data import builtin_items


def _vectors(smollm2: object, path: Path, layers: list[int]) -> bytes:
    items = [i for i in builtin_items() if i.gold != "True"][:2]
    pairs = contrast_pairs(chat_examples("imperfective", items, "zero-shot"), "True")
    assert [(p.positive, p.negative) for p in pairs] == [("False", "True"), ("False", "True")]
    save_vectors(path, steering_vectors(smollm2, pairs, layers), {"source": "test"})  # type: ignore[arg-type]
    return path.read_bytes()


@pytest.fixture(scope="module")
def vector_file(smollm2: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("steer") / "v.safetensors"
    _vectors(smollm2, path, [5, 20])
    return path


@pytest.mark.slow
def test_vectors_are_deterministic(smollm2: object, vector_file: Path, tmp_path: Path) -> None:
    assert _vectors(smollm2, tmp_path / "again.safetensors", [5, 20]) == vector_file.read_bytes()
    assert _vectors(smollm2, tmp_path / "other.safetensors", [5]) != vector_file.read_bytes()


@pytest.mark.slow
def test_steering_changes_identity_and_cache_key(vector_file: Path, tmp_path: Path) -> None:
    base = load_backend("smollm2-135m")
    steered = load_backend(f"smollm2-135m+steer:{vector_file}@0.5")
    ident = steered.identity
    assert ident["adapter"] == "steer" and ident["steer_layers"] == "5,20" and ident["steer_alpha"] == "0.5"
    assert ident["model"].startswith("smollm2-135m+steer-") and ident["model"].endswith("@0.5")
    assert ident["weights_sha256"] == base.identity["weights_sha256"]
    request = GenerationRequest(messages=(ChatMessage("user", "Hi"),))
    keys = {ResponseCache.key(b.identity, request) for b in (base, steered)}
    # The coefficient and the file's content both enter the key: a changed file never serves stale answers.
    keys.add(ResponseCache.key(load_backend(f"smollm2-135m+steer:{vector_file}@0").identity, request))
    changed = tmp_path / "v.safetensors"
    changed.write_bytes(vector_file.read_bytes().replace(b'"source":"test"', b'"source":"TEST"'))
    keys.add(ResponseCache.key(load_backend(f"smollm2-135m+steer:{changed}@0.5").identity, request))
    assert len(keys) == 4
    # The same adapter through --model-option says the same.
    assert load_backend("smollm2-135m", {"adapter": f"steer:{vector_file}@0.5"}).identity == ident


def test_bad_steering_specs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such steering file"):
        load_backend(f"smollm2-135m+steer:{tmp_path / 'none.safetensors'}@1")
    with pytest.raises(ConfigError, match="expected steer:FILE@ALPHA"):
        load_backend(f"smollm2-135m+steer:{tmp_path}")


@pytest.mark.slow
def test_alpha_zero_records_are_byte_identical(smollm2: object, vector_file: Path, tmp_path: Path) -> None:
    config = RunConfig(suite="imperfective", model="smollm2-135m", dataset="builtin",
                       axes={"strategy": ["zero-shot"]}, limit=4, options={"max_new_tokens": 12})
    run(config, tmp_path / "base", backend=smollm2, cache=False)  # type: ignore[arg-type]
    for alpha in ("0", "12"):
        steered = config.model_copy(update={"model": f"smollm2-135m+steer:{vector_file}@{alpha}"})
        run(steered, tmp_path / alpha, cache=False)
    base = (tmp_path / "base" / "items.jsonl").read_bytes()
    assert (tmp_path / "0" / "items.jsonl").read_bytes() == base
    # The hooks are live: a large coefficient changes answers.
    assert (tmp_path / "12" / "items.jsonl").read_bytes() != base
