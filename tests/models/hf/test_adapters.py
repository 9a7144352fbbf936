"""The adapter identity is one frozen record: what the backend identity gains is exactly what
re-diagnosis reads back from ``meta.json``."""

from __future__ import annotations

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.hf.adapters import AdapterIdentity, Lora, Steering


def test_steering_identity_is_recorded_as_before_and_reads_back() -> None:
    steering = Steering("v.safetensors", "1a2b" * 16, (3, 5), 0.5)
    recorded = steering.identity.recorded()
    # The strings of runs adapted before the record existed (their cache keys depend on them).
    assert recorded == {"adapter": "steer", "adapter_sha256": "1a2b" * 16, "steer_layers": "3,5",
                        "steer_alpha": "0.5"}
    assert AdapterIdentity.from_recorded({"backend": "hf", **recorded}) == steering.identity


def test_lora_identity_is_recorded_as_before_and_reads_back() -> None:
    lora = Lora("dir", "cd" * 32, 8, ("k_proj", "q_proj"))
    recorded = lora.identity.recorded()
    assert recorded == {"adapter": "lora", "adapter_sha256": "cd" * 32, "lora_rank": "8",
                        "lora_targets": "k_proj,q_proj"}
    assert AdapterIdentity.from_recorded(recorded) == lora.identity


def test_no_adapter_and_an_unknown_kind() -> None:
    assert AdapterIdentity.from_recorded({"backend": "hf", "model": "m"}) is None
    with pytest.raises(ConfigError, match="adapter kind 'ia3'"):
        AdapterIdentity.from_recorded({"adapter": "ia3"})
