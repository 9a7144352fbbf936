"""The one door every model comes through: a run's, a study's, a judge's, an adapter's training base and a
suite's own model commands (``explica select-prompt``). A model is named by a ``RunConfig``, so that
``--model-option``, ``--dtype``, ``--batch-tokens``, ``--trust-remote-code`` and the run's seed reach its
provider the same way wherever it loads, and it is checked at plan time exactly as it will be loaded.

Here, not in ``lingdiag.engine``, because suites may not import the orchestrator.
"""

from __future__ import annotations

from typing import Any

from lingdiag.config import RunConfig
from lingdiag.models.base import Backend, Capabilities
from lingdiag.models.providers import PROVIDERS, capabilities, load_backend


def load_model(config: RunConfig) -> Backend:
    """The model of ``config`` with its provider options (not cached); a shard's own server if it has one.

    ``--batch-tokens``, ``--trust-remote-code`` and ``--model-option`` all reach the provider through
    ``RunConfig.provider_options``, validated by its option model.
    """
    return load_backend(config.model_spec(), provider_options(config))


def provider_options(config: RunConfig) -> dict[str, Any]:
    """``config.provider_options()``, with the run's seed for a provider whose options take one (``seed``:
    an OpenAI-compatible server's draws) unless ``--model-option seed=`` names another: the seed
    ``meta.json`` records is the one the server is sent.
    """
    options = config.provider_options()
    if "seed" in PROVIDERS.get(config.model_spec().provider)().options.model_fields:
        options.setdefault("seed", config.seed)
    return options


def check_model(config: RunConfig) -> Capabilities:
    """Check the model of ``config`` as :func:`load_model` would load it, without loading a weight: its
    spec, its provider, every provider option, and what the provider checks (a local model that is not
    there, a device this machine lacks, a hub revision not in the offline cache).

    Returns:
        What its backend will serve, as its provider declares it.

    Raises:
        LingdiagError: one line naming the spec or the option and the valid ones.
    """
    return capabilities(config.model_spec(), provider_options(config))
