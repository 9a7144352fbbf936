"""Model specs → backends: ``smollm2-135m``, ``hf:<id|dir>[@<revision>]``, ``gguf:<file>``, ``openai:<model>``.

A provider is registered under its prefix as a lazy stub returning a ``Loader`` (the
provider's option model and its load function): a backend's module, and its heavy
dependencies, are imported only when that backend is chosen. Options are validated
against the provider's model before anything loads, so a mistyped ``--model-option`` is a
one-line error naming the valid options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from lingdiag.config import validate_options
from lingdiag.errors import UnknownNameError
from lingdiag.model_spec import ModelSpec
from lingdiag.models.base import Backend, Capabilities, Loader
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


def checked(spec: ModelSpec | str, options: Mapping[str, Any] | None = None) -> tuple[ModelSpec, Loader, BaseModel]:
    """The spec parsed, its provider's loader and the options validated into the provider's options
    object: everything a load needs, checked without loading a weight (the provider's module is
    imported, not its model). A study checks every model of its plan this way before any loads.

    Raises:
        ConfigError: a malformed spec, an unknown provider or embedded model, an option the provider
            does not take (one line naming the valid ones), or what the provider's own check refuses
            (a local model that is not there).
    """
    if isinstance(spec, str):
        spec = ModelSpec.parse(spec)
    if spec.adapter:
        # The adapter travels as the provider option ``adapter`` (``--model-option adapter=…`` says the
        # same); providers without adapters refuse it as an unknown option.
        options = {**(options or {}), "adapter": spec.adapter}
    if spec.provider == "embedded" and spec.name not in EMBEDDED:
        raise UnknownNameError("model", spec.name, [*EMBEDDED, *(f"{p}:..." for p in PROVIDERS.names())])
    loader = PROVIDERS.get(spec.provider)()
    validated = validate_options(loader.options, options or {}, f"the {spec.provider} backend")
    if loader.check is not None:
        loader.check(spec, validated)
    return spec, loader, validated


def capabilities(spec: ModelSpec | str, options: Mapping[str, Any] | None = None) -> Capabilities:
    """What the backend of ``spec`` with ``options`` will serve, checked as :func:`checked` checks it and
    declared by its provider without loading a weight.
    """
    spec, loader, validated = checked(spec, options)
    return loader.capabilities(spec, validated)


def load_backend(spec: ModelSpec | str, options: Mapping[str, Any] | None = None) -> Backend:
    """Build the backend named by ``spec``.

    Args:
        spec: A ``ModelSpec`` or its text (``lingdiag.model_spec``): ``<embedded name>`` or
            ``<provider>:<rest>`` (``hf:gpt2@main``, ``gguf:m.gguf``,
            ``openai:gpt-4o-mini@http://127.0.0.1:8000/v1``), optionally adapted:
            ``+steer:FILE@ALPHA`` or ``+lora:DIR`` (``lingdiag.models.hf.adapters``).
        options: Provider options (e.g. ``batch_tokens``), validated once into the provider's
            options object, which the backend takes whole.

    Returns:
        The backend, not yet wrapped in the response cache.
    """
    spec, loader, validated = checked(spec, options)
    return loader.load(spec, validated)
