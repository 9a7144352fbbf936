"""Model specs → backends: ``smollm2-135m``, ``hf:<id|dir>``, ``gguf:<file>``, ...

Each provider is a factory registered under its prefix; its heavy imports happen inside
the factory, so choosing one backend never imports another's dependencies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lingdiag.errors import ConfigError, UnknownNameError
from lingdiag.models.base import Backend
from lingdiag.models.embedded import EMBEDDED, cache_dir, ensure_converted, sha256_file
from lingdiag.registry import Registry

Factory = Callable[[str, Mapping[str, Any]], Backend]
PROVIDERS: Registry[Factory] = Registry("model provider")


@PROVIDERS.register("embedded")
def _embedded(name: str, options: Mapping[str, Any]) -> Backend:
    from lingdiag.models.hf import HFBackend

    path, digest = ensure_converted(name)
    return HFBackend(str(path), name=name, weights_hash=digest, **options)


@PROVIDERS.register("hf")
def _hf(spec: str, options: Mapping[str, Any]) -> Backend:
    from lingdiag.models.hf import HFBackend

    path = Path(spec)
    digest = ""
    if path.is_dir():
        weights = sorted(path.glob("*.safetensors")) or sorted(path.glob("*.bin"))
        digest = sha256_file(weights[0]) if len(weights) == 1 else ""
    return HFBackend(spec, weights_hash=digest, **options)


@PROVIDERS.register("gguf")
def _gguf(spec: str, options: Mapping[str, Any]) -> Backend:
    from lingdiag.models.embedded import convert_gguf
    from lingdiag.models.hf import HFBackend

    path = Path(spec).expanduser().resolve()
    if not path.is_file():
        raise ConfigError(f"gguf:{spec}: no such file")
    digest = sha256_file(path)
    target = cache_dir() / "models" / f"gguf-{digest[:16]}"
    if not (target / "lingdiag_source.json").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(path, target)
    return HFBackend(str(target), name=path.name, weights_hash=digest, **options)


def load_backend(spec: str, options: Mapping[str, Any] | None = None) -> Backend:
    """Build the backend named by ``spec``.

    Args:
        spec: ``<embedded name>`` or ``<provider>:<rest>`` (``hf:gpt2``, ``gguf:m.gguf``,
            ``openai:gpt-4o-mini@http://127.0.0.1:8000/v1``).
        options: Provider keyword options (e.g. ``batch_tokens``).

    Returns:
        The backend, not yet wrapped in the response cache.
    """
    options = dict(options or {})
    if spec in EMBEDDED:
        return PROVIDERS.get("embedded")(spec, options)
    provider, sep, rest = spec.partition(":")
    if not sep:
        raise UnknownNameError("model", spec, [*EMBEDDED, *(f"{p}:..." for p in PROVIDERS.names())])
    return PROVIDERS.get(provider)(rest, options)
