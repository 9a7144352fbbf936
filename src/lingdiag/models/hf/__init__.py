"""The transformers backend: hub ids, local directories, GGUF files and the embedded models.

``HFOptions`` (``options``) are the provider options, passed whole to the backend; the three
loaders below are what ``lingdiag.models.providers`` registers for ``hf:``, ``gguf:`` and the
embedded short names.

Modules: ``backend`` (``HFBackend``), ``checkpoint`` (which weights, and a hub revision resolved to
its commit), ``load`` (lazy model loading), ``hub`` (whether a hub id can be had, asked before
loading: offline, one line at once), ``placement`` (device, dtype and threads, resolved once),
``memory`` (batch budgets, out-of-memory back-off), ``batching`` (batches and shared prefixes, no
torch), ``forward`` and ``kv`` (shared-prefix forward passes and key/value caches), ``score`` and
``tokens`` (log-likelihood scoring, packed or padded), ``workplan`` (the work a scoring plan costs, and
the plan of least work), ``attention`` (block-sparse attention for packed passes), ``calibrate``
(the measured noise bound of a reduced dtype), ``decode`` (generation), ``constraints`` (constrained
decoding via xgrammar), ``linear`` (oneDNN-packed linear layers), ``adapters`` (steering vectors and
LoRA), ``chat`` (chat templates of outside tokenizers rendered in the bounded sandbox).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.io.paths import cache_dir, sha256_weights
from lingdiag.model_spec import ModelSpec
from lingdiag.models.base import Backend, Capabilities, Loader
from lingdiag.models.embedded import convert_gguf, ensure_converted
from lingdiag.models.hf.backend import HFBackend, capabilities
from lingdiag.models.hf.checkpoint import Checkpoint, cached_revision, resolve_revision
from lingdiag.models.hf.hub import hub_kwargs
from lingdiag.models.hf.load import local
from lingdiag.models.hf.options import HFOptions

__all__ = ["EMBEDDED_LOADER", "GGUF_LOADER", "HF_LOADER", "Checkpoint", "HFBackend", "HFOptions"]


def load_embedded(spec: ModelSpec, options: HFOptions) -> Backend:
    """An embedded model by short name, converted into the cache on first use."""
    path, digest = ensure_converted(spec.name)
    return HFBackend(Checkpoint(str(path), name=spec.name, weights_hash=digest), options)


def load_hf(spec: ModelSpec, options: HFOptions) -> Backend:
    """A hub id (at ``spec.revision``, resolved to its commit, when one is named) or a local model directory."""
    path = Path(spec.name)
    digest = ""
    if path.is_dir():
        weights = sorted(path.glob("*.safetensors")) or sorted(path.glob("*.bin"))
        if len(weights) == 1:
            digest = sha256_weights(weights[0])
        elif weights:  # sharded: every shard counts, so a changed shard never serves stale cached answers
            digest = hashlib.sha256("".join(f"{w.name}:{sha256_weights(w)}\n" for w in weights).encode()).hexdigest()
    revision = resolve_revision(spec.name, spec.revision) if spec.revision else None
    return HFBackend(Checkpoint(spec.name, weights_hash=digest, revision=revision), options)


def _declared(spec: ModelSpec, options: HFOptions) -> Capabilities:
    """What an ``HFBackend`` of these options serves (every model alike: nothing is loaded to say it)."""
    return capabilities()


def _check_placement(options: HFOptions) -> None:
    """A device this machine does not have (``device=cuda`` on a CPU node), a dtype the device cannot
    run: refused as the backend would refuse it when built (``placement.resolve``), before any load.
    """
    options.placement()


def check_embedded(spec: ModelSpec, options: HFOptions) -> None:
    """An embedded model's device and dtype, checked before anything loads."""
    _check_placement(options)


def check_hf(spec: ModelSpec, options: HFOptions) -> None:
    """A local model directory that is not there, a device this machine lacks, and offline
    (``HF_HUB_OFFLINE=1``) a hub revision the local cache does not hold: refused before anything loads.
    """
    if local(spec.name) and not Path(spec.name).expanduser().is_dir():
        raise ConfigError(f"no such model directory: {spec.name}")
    if not local(spec.name):
        from huggingface_hub import constants

        if constants.is_offline_mode():  # online, the hub is asked when the model loads
            if spec.revision:
                cached_revision(spec.name, spec.revision)
            else:
                hub_kwargs(spec.name)
    _check_placement(options)


def check_gguf(spec: ModelSpec, options: HFOptions) -> None:
    """A GGUF file that is not there, or a device this machine lacks, refused before anything loads."""
    if not Path(spec.name).expanduser().is_file():
        raise ConfigError(f"gguf:{spec.name}: no such file")
    _check_placement(options)


def load_gguf(spec: ModelSpec, options: HFOptions) -> Backend:
    """A GGUF file, converted once into a transformers directory in the cache."""
    check_gguf(spec, options)
    path = Path(spec.name).expanduser().resolve()
    digest = sha256_weights(path)
    target = cache_dir() / "models" / f"gguf-{digest[:16]}"
    if not (target / "lingdiag_source.json").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(path, target)
    return HFBackend(Checkpoint(str(target), name=path.name, weights_hash=digest), options)


EMBEDDED_LOADER = Loader(HFOptions, load_embedded, _declared, check_embedded)
HF_LOADER = Loader(HFOptions, load_hf, _declared, check_hf)
GGUF_LOADER = Loader(HFOptions, load_gguf, _declared, check_gguf)
