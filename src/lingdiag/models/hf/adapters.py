"""Adapted models: a steering vector or a LoRA adapter applied to a loaded transformers model.

An adapter is one small frozen record, parsed once from the model spec
(``smollm2-135m+steer:FILE@α``, ``smollm2-135m+lora:DIR``) or ``--model-option adapter=…``,
passed whole to the backend. Its ``identity`` (the files' SHA-256, layers and coefficient,
or rank and targets) enters the backend identity, so cache keys, ``meta.json`` and tables
tell the base and the adapted model apart and a changed file never serves stale answers.

``apply`` runs once, right after the weights load and before the CPU levers pack the linear
layers: steering registers forward hooks on decoder layers (every position, every forward,
so scoring, generation, prefix reuse and the key/value caches all see the same model); a
LoRA adapter is merged into the weights, so every path runs the plain, packed model.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lingdiag.errors import ConfigError
from lingdiag.io.paths import sha256_file


@dataclass(frozen=True, slots=True)
class AdapterIdentity:
    """What an adapter adds to the backend identity (so to cache keys and ``meta.json``'s
    ``model``): written here, read back by ``lingdiag.adapt.rediagnosis``, one shape for both.
    """

    kind: Literal["lora", "steer"]
    sha256: str
    """SHA-256 of the steering file, or over the LoRA adapter's config and weights."""
    rank: int | None = None
    """LoRA only."""
    targets: tuple[str, ...] = ()
    """LoRA only: the adapted modules, sorted."""
    layers: tuple[int, ...] = ()
    """Steering only: the steered decoder layers."""
    alpha: float | None = None
    """Steering only: the coefficient."""

    def recorded(self) -> dict[str, str]:
        """The identity entries, as strings (the cache keys of existing adapted runs depend on them)."""
        if self.kind == "steer":
            return {"adapter": "steer", "adapter_sha256": self.sha256,
                    "steer_layers": ",".join(map(str, self.layers)), "steer_alpha": repr(self.alpha)}
        return {"adapter": "lora", "adapter_sha256": self.sha256, "lora_rank": str(self.rank),
                "lora_targets": ",".join(self.targets)}

    @classmethod
    def from_recorded(cls, identity: Mapping[str, Any]) -> AdapterIdentity | None:
        """The adapter a backend identity records; None for a model without one.

        Raises:
            ConfigError: the identity names an adapter kind this version does not know.
        """
        kind = identity.get("adapter")
        if not kind:
            return None
        sha = str(identity.get("adapter_sha256", ""))
        if kind == "steer":
            alpha = identity.get("steer_alpha")
            layers = str(identity.get("steer_layers", ""))
            return cls("steer", sha, layers=tuple(int(v) for v in layers.split(",") if v),
                       alpha=float(alpha) if alpha is not None else None)
        if kind == "lora":
            rank = str(identity.get("lora_rank", ""))
            targets = str(identity.get("lora_targets", ""))
            return cls("lora", sha, rank=int(rank) if rank.isdigit() else None,
                       targets=tuple(t for t in targets.split(",") if t))
        raise ConfigError(f"adapter kind {kind!r} in a model identity: expected lora or steer")


_STEER = re.compile(r"^steer:(?P<path>.+)@(?P<alpha>[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)$")


def decoder_layers(model: Any) -> Any:
    """The decoder's layer list (``model.model.layers`` for Llama-, Gemma-, Qwen-style models)."""
    layers = getattr(model.get_decoder(), "layers", None)
    if layers is None:
        raise ConfigError(f"{type(model).__name__}: no decoder layer list to steer")
    return layers


@dataclass(frozen=True, slots=True)
class Steering:
    """A steering vector per layer, added with coefficient ``alpha`` to each layer's output."""

    path: str
    sha256: str
    """SHA-256 of the vector file."""
    layers: tuple[int, ...]
    alpha: float

    @property
    def identity(self) -> AdapterIdentity:
        """What the backend identity gains."""
        return AdapterIdentity("steer", self.sha256, layers=self.layers, alpha=self.alpha)

    @property
    def suffix(self) -> str:
        """What the model's display name gains (``+steer-1a2b3c4d@0.5``)."""
        return f"+steer-{self.sha256[:8]}@{self.alpha:g}"

    def apply(self, model: Any) -> Any:
        """Register the hooks on ``model`` (on each layer's own device and dtype); returns ``model``."""
        from safetensors.torch import load_file

        vectors = load_file(self.path)
        layers = decoder_layers(model)
        for index in self.layers:
            layer = layers[index]
            weight = next(layer.parameters())
            delta = (self.alpha * vectors[f"layer.{index}"].float()).to(device=weight.device, dtype=weight.dtype)
            layer.register_forward_hook(_adder(delta))
        return model


def _adder(delta: Any) -> Any:
    def hook(module: Any, args: Any, output: Any) -> Any:
        if isinstance(output, tuple):
            return (output[0] + delta, *output[1:])
        return output + delta

    return hook


@dataclass(frozen=True, slots=True)
class Lora:
    """A LoRA adapter directory (``peft``), merged into the weights at load."""

    path: str
    sha256: str
    """SHA-256 over the adapter's config and weights files."""
    rank: int
    targets: tuple[str, ...]

    @property
    def identity(self) -> AdapterIdentity:
        """What the backend identity gains."""
        return AdapterIdentity("lora", self.sha256, rank=self.rank, targets=self.targets)

    @property
    def suffix(self) -> str:
        """What the model's display name gains (``+lora-1a2b3c4d``)."""
        return f"+lora-{self.sha256[:8]}"

    def apply(self, model: Any) -> Any:
        """``model`` with the adapter merged into its weights."""
        from peft import PeftModel

        with quiet_peft():
            return PeftModel.from_pretrained(model, self.path).merge_and_unload()


@contextmanager
def quiet_peft() -> Iterator[None]:
    """Silence peft 0.21's call of transformers' deprecated ``is_gradient_checkpointing`` (nothing to act on)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing", category=FutureWarning)
        yield


Adapter = Steering | Lora
"""What ``--model BASE+steer:…`` or ``+lora:…`` adds to the base model."""

LORA_FILES = ("adapter_config.json", "adapter_model.safetensors")


def read_steering(spec: str) -> Steering:
    """``steer:FILE@α`` → a ``Steering`` (the file's layers from its metadata)."""
    m = _STEER.match(spec)
    if m is None:
        raise ConfigError(f"adapter {spec!r}: expected steer:FILE@ALPHA (e.g. steer:v.safetensors@4)")
    path = Path(m["path"]).expanduser()
    if not path.is_file():
        raise ConfigError(f"adapter {spec!r}: no such steering file {path}")
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        layers = tuple(sorted(int(k.partition(".")[2]) for k in f.keys() if k.startswith("layer.")))
    if not layers:
        raise ConfigError(f"{path}: no layer.N tensors; build it with lingdiag adapt steer")
    return Steering(str(path), sha256_file(path), layers, float(m["alpha"]))


def read_lora(spec: str) -> Lora:
    """``lora:DIR`` → a ``Lora`` (rank and targets from its ``adapter_config.json``)."""
    path = Path(spec.removeprefix("lora:")).expanduser()
    missing = [f for f in LORA_FILES if not (path / f).is_file()]
    if missing:
        raise ConfigError(f"adapter {spec!r}: {path} lacks {', '.join(missing)}; train it with lingdiag adapt lora")
    config = json.loads((path / LORA_FILES[0]).read_text(encoding="utf-8"))
    digest = hashlib.sha256("".join(f"{f}:{sha256_file(path / f)}\n" for f in LORA_FILES).encode()).hexdigest()
    targets = config.get("target_modules") or []
    return Lora(str(path), digest, int(config.get("r", 0)), tuple(sorted(targets)))


def parse_adapter(spec: str) -> Adapter:
    """``steer:FILE@α`` or ``lora:DIR`` → the adapter, its files read and hashed once."""
    if spec.startswith("steer:"):
        return read_steering(spec)
    if spec.startswith("lora:"):
        return read_lora(spec)
    raise ConfigError(f"adapter {spec!r}: expected steer:FILE@ALPHA or lora:DIR")
