"""The calibrated noise bound (``lingdiag.models.hf.calibrate``): deterministic, stored and reused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import smollm2_dir

from lingdiag.models.hf import HFBackend, calibrate
from lingdiag.models.hf.placement import resolve


def _tiny_pair() -> tuple[HFBackend, HFBackend]:
    """A tiny random Llama in bf16 and the same weights in float32."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    high = LlamaForCausalLM(LlamaConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, intermediate_size=128, vocab_size=49152)).eval()
    low = copy.deepcopy(high).to(torch.bfloat16)
    high = low.float()  # the bf16 values, exactly, in float32: only the arithmetic differs
    low = copy.deepcopy(high).to(torch.bfloat16)
    path = str(smollm2_dir())
    return (HFBackend.from_model(low, path, resolve(dtype="bfloat16", packed_linears=False), name="tiny"),
            HFBackend.from_model(high, path, resolve(packed_linears=False), name="tiny"))


@pytest.mark.slow  # the SmolLM2 tokenizer's directory comes from converting the embedded model
def test_the_calibration_is_deterministic_and_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path))
    low, high = _tiny_pair()
    first = calibrate.measure(low.loglikelihood, high.loglikelihood)
    assert calibrate.measure(low.loglikelihood, high.loglikelihood) == first
    assert first.worst > 0 and first.per_token == max(calibrate.FLOOR, calibrate.HEADROOM * first.worst)
    assert first.pairs == sum(len(i) * (len(i) - 1) // 2 for i in calibrate.sample())
    identity = {"backend": "hf", "model": "tiny-bfloat16"}
    assert calibrate.stored(identity, low.loglikelihood, high.loglikelihood) == first

    def refuse(_: Any) -> Any:
        raise AssertionError("a stored calibration is read back, not measured again")

    assert calibrate.stored(identity, refuse, refuse) == first
    [path] = (tmp_path / "calibration").iterdir()
    path.write_text("{not json")  # damaged: measured again and overwritten
    assert calibrate.stored(identity, low.loglikelihood, high.loglikelihood) == first
    assert json.loads(path.read_text())["per_token"] == first.per_token
