"""Whether a hub model can be had, asked before transformers asks: offline, the hub client
retries each file for about a minute and ends in a multi-line message; here a model that is
neither reachable nor cached fails at once, in one line that says how to work offline.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

from lingdiag.errors import BackendError, ConfigError

PROBE_SECONDS = 3.0
"""How long the hub's host gets to accept a connection before the node counts as offline."""

OFFLINE_HELP = ("on an offline node, copy the model's directory here and use --model hf:/path/to/dir, or fill "
                "the hub cache (HF_HOME) on a machine with internet and set HF_HUB_OFFLINE=1")


def _reachable(endpoint: str) -> str | None:
    """None when ``endpoint``'s host accepts a connection, else why not."""
    url = urlsplit(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=PROBE_SECONDS).close()
    except OSError as e:
        return e.strerror or type(e).__name__
    return None


def hub_kwargs(model_id: str, revision: str | None = None) -> dict[str, Any]:
    """Extra ``from_pretrained`` arguments for hub id ``model_id`` (at ``revision``, a commit, where one
    is named): none when the hub answers, ``local_files_only`` when it does not but the model is cached.

    Raises:
        ConfigError: ``model_id`` is neither a directory nor a valid hub id.
        BackendError: The model is not cached and the hub is offline (HF_HUB_OFFLINE) or unreachable.
    """
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        cached = isinstance(try_to_load_from_cache(model_id, "config.json", revision=revision), str)
    except ValueError:  # huggingface_hub's HFValidationError: not an owner/name id
        raise ConfigError(f"{model_id!r} is neither a model directory nor a hub id (owner/name: letters, "
                          "digits, '-', '_', '.')") from None
    at = f" at {revision}" if revision else ""
    where = f"{model_id!r}{at} is not in the hub cache {constants.HF_HUB_CACHE}"
    if constants.HF_HUB_OFFLINE:
        if cached:
            return {}
        raise BackendError(f"{where} and HF_HUB_OFFLINE is set; {OFFLINE_HELP}")
    why = _reachable(constants.ENDPOINT)
    if why is None:
        return {}
    if cached:
        return {"local_files_only": True}
    raise BackendError(f"cannot reach the Hugging Face hub at {constants.ENDPOINT} ({why}) and {where}; "
                       f"{OFFLINE_HELP}")
