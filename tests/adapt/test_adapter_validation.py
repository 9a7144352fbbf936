"""Adapters are what they claim (issue 35): a steering file with bad keys, shapes or
non-finite values, an infinite coefficient or the wrong width is a one-line refusal, never a
run whose every score is NaN."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.hf.adapters import read_steering

if TYPE_CHECKING:  # torch loads inside the tests that write tensors
    from torch import Tensor


def _save(path: Path, tensors: dict[str, Tensor]) -> Path:
    from safetensors.torch import save_file

    save_file(tensors, str(path))
    return path


def test_infinite_coefficient_is_refused(tmp_path: Path) -> None:
    import torch

    f = _save(tmp_path / "v.safetensors", {"layer.1": torch.ones(8)})
    with pytest.raises(ConfigError, match="not a finite number"):
        read_steering(f"steer:{f}@1e309")
    assert read_steering(f"steer:{f}@2").alpha == 2.0


@pytest.mark.parametrize(("tensors", "message"), [
    ({"layer.x": "ones8"}, "not named layer.N"),
    ({"layer.1": "nan8"}, "NaN or an infinity"),
    ({"layer.1": "matrix"}, "not one vector"),
])
def test_bad_steering_files_are_one_line_errors(tmp_path: Path, tensors: dict[str, str], message: str) -> None:
    import torch

    made = {"ones8": torch.ones(8), "nan8": torch.full((8,), float("nan")), "matrix": torch.ones(2, 8)}
    f = _save(tmp_path / "v.safetensors", {k: made[v] for k, v in tensors.items()})
    with pytest.raises(ConfigError, match=message):
        read_steering(f"steer:{f}@1")


def test_not_a_safetensors_file_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "v.safetensors"
    f.write_bytes(b"\x00" * 64)
    with pytest.raises(ConfigError, match="not a readable safetensors file"):
        read_steering(f"steer:{f}@1")


def test_vector_width_and_layers_must_match_the_model(tmp_path: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=2, vocab_size=64))
    wide = read_steering(f"steer:{_save(tmp_path / 'w.safetensors', {'layer.1': torch.ones(8)})}@1")
    with pytest.raises(ConfigError, match="hidden size is 16"):
        wide.apply(model)
    deep = read_steering(f"steer:{_save(tmp_path / 'd.safetensors', {'layer.7': torch.ones(16)})}@1")
    with pytest.raises(ConfigError, match="model has 2 layers"):
        deep.apply(model)
    fits = read_steering(f"steer:{_save(tmp_path / 'f.safetensors', {'layer.1': torch.ones(16)})}@1")
    assert fits.apply(model) is model


def _lora(path: Path, config: object, rank: int = 2, modules: tuple[str, ...] = ("q_proj", "v_proj"),
          fill: float = 0.5) -> str:
    import json

    import torch

    path.mkdir()
    (path / "adapter_config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    tensors: dict[str, Tensor] = {}
    for layer in range(2):
        for m in modules:
            stem = f"base_model.model.model.layers.{layer}.self_attn.{m}"
            tensors[f"{stem}.lora_A.weight"] = torch.full((rank, 16), fill)
            tensors[f"{stem}.lora_B.weight"] = torch.full((16, rank), fill)
    _save(path / "adapter_model.safetensors", tensors)
    return f"lora:{path}"


GOOD = {"r": 2, "target_modules": ["q_proj", "v_proj"], "peft_type": "LORA"}


def test_a_well_formed_lora_is_read(tmp_path: Path) -> None:
    from lingdiag.models.hf.adapters import read_lora

    adapter = read_lora(_lora(tmp_path / "a", GOOD))
    assert adapter.rank == 2 and adapter.targets == ("q_proj", "v_proj")


@pytest.mark.parametrize(("config", "kwargs", "message"), [
    (GOOD, {"modules": ("q_proj",)}, "no lora_A/lora_B tensors for target module.s. v_proj"),
    (GOOD, {"fill": float("nan")}, "NaN or an infinity"),
    # The config alone would make peft allocate rank 10^9 matrices (hundreds of GB): refused first.
    ({**GOOD, "r": 10**9}, {}, "not that of rank 1000000000"),
    ({**GOOD, "r": "eight"}, {}, "field 'r' is 'eight'"),
    ({**GOOD, "target_modules": 7}, {}, "field 'target_modules' is 7"),
    ("{not json", {}, "not a readable JSON adapter config"),
    ("[]", {}, "not a JSON object"),
])
def test_malformed_loras_are_one_line_errors(tmp_path: Path, config: object, kwargs: dict[str, object],
                                             message: str) -> None:
    from lingdiag.models.hf.adapters import read_lora

    with pytest.raises(ConfigError, match=message):
        read_lora(_lora(tmp_path / "a", config, **kwargs))  # type: ignore[arg-type]
