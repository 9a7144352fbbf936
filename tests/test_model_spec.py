"""The one model-spec parser: every form, its canonical text, and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingdiag.errors import ConfigError, UnknownNameError
from lingdiag.model_spec import OPENAI_URL, ModelSpec
from lingdiag.models.providers import load_backend


@pytest.mark.parametrize(("text", "expected"), [
    ("smollm2-135m", ModelSpec("embedded", "smollm2-135m")),
    ("hf:gpt2", ModelSpec("hf", "gpt2")),
    ("hf:org/tiny@step100", ModelSpec("hf", "org/tiny", revision="step100")),
    ("hf:org/tiny@refs/pr/1", ModelSpec("hf", "org/tiny", revision="refs/pr/1")),
    ("gguf:m@2.gguf", ModelSpec("gguf", "m@2.gguf")),
    ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
    ("openai:smol@http://127.0.0.1:8000", ModelSpec("openai", "smol", base_url="http://127.0.0.1:8000/v1")),
    ("openai:smol@http://127.0.0.1:8000/v1/", ModelSpec("openai", "smol", base_url="http://127.0.0.1:8000/v1")),
    ("openai:meta/llama@https://host.example/api/v1",
     ModelSpec("openai", "meta/llama", base_url="https://host.example/api/v1")),
    ("smollm2-135m+steer:v.safetensors@4", ModelSpec("embedded", "smollm2-135m", adapter="steer:v.safetensors@4")),
    ("hf:org/tiny@main+lora:dir", ModelSpec("hf", "org/tiny", revision="main", adapter="lora:dir")),
])
def test_parse(text: str, expected: ModelSpec) -> None:
    spec = ModelSpec.parse(text)
    assert spec == expected
    assert ModelSpec.parse(str(spec)) == spec  # the canonical text reads back as the same spec


def test_openai_url_defaults_to_openai() -> None:
    assert ModelSpec.parse("openai:gpt-4o-mini").url == OPENAI_URL


def test_a_directory_holding_an_at_sign_is_a_path(tmp_path: Path) -> None:
    model_dir = tmp_path / "ckpt@step100"
    model_dir.mkdir()
    assert ModelSpec.parse(f"hf:{model_dir}") == ModelSpec("hf", str(model_dir))


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty model spec"),
    ("hf:", "expected PROVIDER:NAME"),
    (":gpt2", "expected PROVIDER:NAME"),
    ("hf:org/tiny@", "expected hf:ID@REVISION"),
    ("hf:@main", "expected hf:ID@REVISION"),
    ("openai:@http://h/v1", "name a model"),
    ("openai:m@ftp://h", "is not an http\\(s\\) URL"),
    ("openai:m@http://user:pw@h/v1", "put no credentials in the URL"),
])
def test_malformed_specs_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        ModelSpec.parse(text)
    assert "\n" not in str(e.value)


def test_shard_server_needs_an_openai_model() -> None:
    assert str(ModelSpec.parse("openai:m").with_base_url("http://b:1")) == "openai:m@http://b:1/v1"
    with pytest.raises(ConfigError, match="needs an openai: model"):
        ModelSpec.parse("hf:gpt2").with_base_url("http://b/v1")


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="smollm2-135m"):
        load_backend("no-such-model")
    with pytest.raises(UnknownNameError, match="valid model providers: embedded, gguf, hf, openai"):
        load_backend("nosuch:thing")


def test_a_revision_of_a_local_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a local directory, which has no revisions"):
        load_backend(f"hf:{tmp_path}@main")
