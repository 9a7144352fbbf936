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
import math
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
        width = getattr(model.config, "hidden_size", None)
        for index in self.layers:
            if index >= len(layers):
                raise ConfigError(f"{self.path}: a vector for layer {index}, but the model has {len(layers)} layers")
            if width is not None and vectors[f"layer.{index}"].numel() != width:
                raise ConfigError(f"{self.path}: layer.{index} has {vectors[f'layer.{index}'].numel()} values, "
                                  f"but the model's hidden size is {width}")
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
    from safetensors import SafetensorError, safe_open

    alpha = float(m["alpha"])
    if not math.isfinite(alpha):  # 1e309 parses as infinity: every score NaN
        raise ConfigError(f"adapter {spec!r}: the coefficient {m['alpha']} is not a finite number")
    try:
        with safe_open(str(path), "pt") as f:
            keys = list(f.keys())
            bad = [k for k in keys if not re.fullmatch(r"layer\.\d+", k)]
            if bad:
                raise ConfigError(f"{path}: tensor {bad[0]!r} is not named layer.N; build it with lingdiag adapt steer")
            for k in keys:
                vector = f.get_tensor(k)
                if vector.dim() != 1 or vector.numel() == 0:
                    raise ConfigError(f"{path}: tensor {k!r} has shape {tuple(vector.shape)}, not one vector")
                if not bool(vector.float().isfinite().all()):
                    raise ConfigError(f"{path}: tensor {k!r} holds a NaN or an infinity")
    except (OSError, SafetensorError) as e:
        raise ConfigError(f"{path}: not a readable safetensors file ({e})") from e
    layers = tuple(sorted(int(k.partition(".")[2]) for k in keys))
    if not layers:
        raise ConfigError(f"{path}: no layer.N tensors; build it with lingdiag adapt steer")
    return Steering(str(path), sha256_file(path), layers, alpha)


def read_lora(spec: str) -> Lora:
    """``lora:DIR`` → a ``Lora`` (rank and targets from its ``adapter_config.json``)."""
    path = Path(spec.removeprefix("lora:")).expanduser()
    missing = [f for f in LORA_FILES if not (path / f).is_file()]
    if missing:
        raise ConfigError(f"adapter {spec!r}: {path} lacks {', '.join(missing)}; train it with lingdiag adapt lora")
    rank, targets = _lora_config(path / LORA_FILES[0])
    _check_lora_tensors(path / LORA_FILES[1], rank, targets)
    digest = hashlib.sha256("".join(f"{f}:{sha256_file(path / f)}\n" for f in LORA_FILES).encode()).hexdigest()
    return Lora(str(path), digest, rank, tuple(sorted(targets)))


def _lora_config(file: Path) -> tuple[int, list[str]]:
    """The rank and target modules of an ``adapter_config.json``, checked before peft reads it."""
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{file}: not a readable JSON adapter config ({e})") from e
    if not isinstance(config, dict):
        raise ConfigError(f"{file}: not a JSON object")
    rank, targets = config.get("r"), config.get("target_modules")
    if type(rank) is not int or rank < 1:
        raise ConfigError(f"{file}: field 'r' is {rank!r}, not a positive integer")
    if isinstance(targets, str):
        targets = [targets]
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t for t in targets):
        raise ConfigError(f"{file}: field 'target_modules' is {targets!r}, not a list of module names")
    return rank, targets


def _check_lora_tensors(file: Path, rank: int, targets: list[str]) -> None:
    """Refuse a weights file that is not the adapter its config claims, before peft allocates
    anything from the config: every target module has its ``lora_A`` and ``lora_B`` tensors of
    the config's rank, and every value is finite (a file without them would run the base model
    under the adapter's name; a rank of 10^9 in the config alone would allocate hundreds of GB).
    """
    from safetensors import SafetensorError, safe_open

    found: dict[str, set[str]] = {t: set() for t in targets}
    try:
        with safe_open(str(file), "pt") as f:
            for key in f.keys():
                m = re.search(r"\.([^.]+)\.(lora_[AB])\.weight$", key)
                if m is None:
                    continue
                module, part = m.groups()
                shape = tuple(f.get_slice(key).get_shape())
                if len(shape) != 2 or shape[0 if part == "lora_A" else 1] != rank:
                    raise ConfigError(f"{file}: tensor {key!r} has shape {shape}, not that of rank {rank} "
                                      "(adapter_config.json 'r')")
                if not bool(f.get_tensor(key).float().isfinite().all()):
                    raise ConfigError(f"{file}: tensor {key!r} holds a NaN or an infinity")
                found.setdefault(module, set()).add(part)
    except (OSError, SafetensorError) as e:
        raise ConfigError(f"{file}: not a readable safetensors file ({e})") from e
    missing = [t for t in targets if found.get(t) != {"lora_A", "lora_B"}]
    if missing:
        raise ConfigError(f"{file}: no lora_A/lora_B tensors for target module(s) {', '.join(missing)}; "
                          "not the adapter its config names")


def parse_adapter(spec: str) -> Adapter:
    """``steer:FILE@α`` or ``lora:DIR`` → the adapter, its files read and hashed once."""
    if spec.startswith("steer:"):
        return read_steering(spec)
    if spec.startswith("lora:"):
        return read_lora(spec)
    raise ConfigError(f"adapter {spec!r}: expected steer:FILE@ALPHA or lora:DIR")
