"""The OpenAI-compatible backend: OpenAI, vLLM, SGLang, TGI and llama.cpp servers.

``client`` is the retrying HTTP client, ``backend`` the request/response mapping and the
prompt-logprob check, ``prices`` the cost estimate. ``LOADER`` is what
``lingdiag.models.providers`` registers for ``openai:``.
"""

from __future__ import annotations

from lingdiag.errors import MissingDependency
from lingdiag.model_spec import ModelSpec
from lingdiag.models.base import Backend, Capabilities, Loader
from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions, capabilities

__all__ = ["LOADER", "OpenAIBackend", "OpenAIOptions", "load"]


def load(spec: ModelSpec, options: OpenAIOptions) -> Backend:
    """``openai:<model>[@<base_url>]`` with validated options."""
    try:
        import httpx  # noqa: F401
    except ImportError as e:
        raise MissingDependency("the openai backend", "openai", ["httpx"]) from e
    return OpenAIBackend(spec.name, spec.url, options)


def declared(spec: ModelSpec, options: OpenAIOptions) -> Capabilities:
    """What ``load(spec, options)`` will serve, without a request."""
    return capabilities(spec.name, spec.url, options)


LOADER = Loader(OpenAIOptions, load, declared)
