"""Model specs → backends: ``smollm2-135m``, ``hf:<id|dir>``, ``gguf:<file>``, ``openai:<model>``.

A provider is registered under its prefix as a lazy stub returning a ``Loader`` (the
provider's option model and its load function): a backend's module, and its heavy
dependencies, are imported only when that backend is chosen. Options are validated
against the provider's model before anything loads, so a mistyped ``--model-option`` is a
one-line error naming the valid options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lingdiag.config import validate_options
from lingdiag.errors import UnknownNameError
from lingdiag.models.base import Backend, Loader
from lingdiag.models.embedded import EMBEDDED
from lingdiag.registry import Registry

PROVIDERS: Registry[Callable[[], Loader]] = Registry("model provider")
"""Prefix → lazy stub returning the provider's ``Loader``."""


@PROVIDERS.register("embedded")
def _embedded() -> Loader:
    from lingdiag.models import hf

    return hf.EMBEDDED_LOADER


@PROVIDERS.register("hf")
def _hf() -> Loader:
    from lingdiag.models import hf

    return hf.HF_LOADER


@PROVIDERS.register("gguf")
def _gguf() -> Loader:
    from lingdiag.models import hf

    return hf.GGUF_LOADER


@PROVIDERS.register("openai")
def _openai() -> Loader:
    from lingdiag.models import openai

    return openai.LOADER


_ADAPTED = re.compile(r"^(?P<base>.+?)\+(?P<adapter>(?:steer|lora):.+)$")


def split_adapter(spec: str) -> tuple[str, str | None]:
    """``smollm2-135m+steer:v.safetensors@4`` → ``("smollm2-135m", "steer:v.safetensors@4")``.

    The adapter travels as the provider option ``adapter`` (``--model-option adapter=…``
    says the same); providers without adapters refuse it as an unknown option.
    """
    m = _ADAPTED.match(spec)
    return (m["base"], m["adapter"]) if m else (spec, None)


def load_backend(spec: str, options: Mapping[str, Any] | None = None) -> Backend:
    """Build the backend named by ``spec``.

    Args:
        spec: ``<embedded name>`` or ``<provider>:<rest>`` (``hf:gpt2``, ``gguf:m.gguf``,
            ``openai:gpt-4o-mini@http://127.0.0.1:8000/v1``), optionally adapted:
            ``+steer:FILE@ALPHA`` or ``+lora:DIR`` (``lingdiag.models.hf.adapters``).
        options: Provider options (e.g. ``batch_tokens``), validated by the provider.

    Returns:
        The backend, not yet wrapped in the response cache.
    """
    spec, adapter = split_adapter(spec)
    if adapter:
        options = {**(options or {}), "adapter": adapter}
    if spec in EMBEDDED:
        provider, rest = "embedded", spec
    else:
        provider, sep, rest = spec.partition(":")
        if not sep:
            raise UnknownNameError("model", spec, [*EMBEDDED, *(f"{p}:..." for p in PROVIDERS.names())])
    loader = PROVIDERS.get(provider)()
    return loader.load(rest, validate_options(loader.options, options or {}, f"the {provider} backend"))
