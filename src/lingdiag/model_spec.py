"""The model spec, parsed once: ``smollm2-135m``, ``hf:<id|dir>[@<revision>]``, ``gguf:<file>``,
``openai:<model>[@<base_url>]``, each optionally adapted (``+steer:FILE@ALPHA``, ``+lora:DIR``).

Every reader of a spec string (the provider registry, the run config's shard servers, the cost
estimate, the similarity encoder, the adaptation commands) takes a ``ModelSpec`` from ``parse``,
so a spec means one thing everywhere and a malformed one is one line naming it. It lives beside
``config`` rather than in ``models`` because the run config reads it and ``models`` reads the
config.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from lingdiag.errors import ConfigError

OPENAI_URL = "https://api.openai.com/v1"
"""Where an ``openai:`` model without ``@<base_url>`` is sent."""

_ADAPTED = re.compile(r"^(?P<base>.+?)\+(?P<adapter>(?:steer|lora):.+)$")


@dataclass(frozen=True)
class ModelSpec:
    """One parsed model spec."""

    provider: str
    """``embedded`` for a short name without a prefix, else the prefix (``hf``, ``gguf``, ``openai``)."""
    name: str
    """The embedded name, hub id or directory, GGUF file, or served model name."""
    revision: str | None = None
    """``hf:ID@REVISION``: a hub branch, tag or commit."""
    base_url: str | None = None
    """``openai:NAME@URL``: the server, normalised (``/v1`` added to a bare host); None for OpenAI's."""
    adapter: str | None = None
    """``+steer:FILE@ALPHA`` or ``+lora:DIR``, as written."""

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        """``text`` as a spec; a malformed one is a ``ConfigError`` of one line quoting it."""
        base, adapter = _split_adapter(text.strip())
        provider, sep, rest = base.partition(":")
        if not sep:
            if not base:
                raise ConfigError("empty model spec: name a model, e.g. smollm2-135m or hf:HUB_ID")
            return cls("embedded", base, adapter=adapter)
        if not provider or not rest:
            raise ConfigError(f"model {text!r}: expected PROVIDER:NAME, e.g. hf:gpt2 or openai:gpt-4o-mini")
        if provider == "hf":
            return cls("hf", *_hub(rest, text), adapter=adapter)
        if provider == "openai":
            model, url = _served(rest, text)
            return cls("openai", model, base_url=url, adapter=adapter)
        return cls(provider, rest, adapter=adapter)

    @property
    def url(self) -> str:
        """The server an ``openai:`` model is sent to (OpenAI's unless named)."""
        return self.base_url or OPENAI_URL

    def with_base_url(self, url: str) -> ModelSpec:
        """This ``openai:`` model on another server (a shard's own)."""
        if self.provider != "openai":
            raise ConfigError(f"shard_base_urls needs an openai: model, not {str(self)!r}")
        return replace(self, base_url=_served(f"{self.name}@{url}", url)[1])

    def __str__(self) -> str:
        text = self.name if self.provider == "embedded" else f"{self.provider}:{self.name}"
        at = self.revision or self.base_url
        return text + (f"@{at}" if at else "") + (f"+{self.adapter}" if self.adapter else "")


def _split_adapter(text: str) -> tuple[str, str | None]:
    m = _ADAPTED.match(text)
    return (m["base"], m["adapter"]) if m else (text, None)


def _hub(rest: str, text: str) -> tuple[str, str | None]:
    """``ID@REVISION`` → ``(ID, REVISION)``; an existing directory is a path, whatever ``@`` it holds."""
    if "@" not in rest or Path(rest).expanduser().is_dir():
        return rest, None
    name, _, revision = rest.rpartition("@")
    if not name or not revision:
        raise ConfigError(f"model {text!r}: expected hf:ID@REVISION (a branch, tag or commit), e.g. "
                          "hf:HuggingFaceTB/SmolLM2-135M@main")
    return name, revision


def _served(rest: str, text: str) -> tuple[str, str | None]:
    """``NAME[@URL]`` → the model name and the normalised URL (None: OpenAI's)."""
    model, sep, url = rest.partition("@")
    if not model:
        raise ConfigError(f"model {text!r}: name a model, e.g. openai:gpt-4o-mini or openai:NAME@http://HOST:PORT/v1")
    if not sep:
        return model, None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"openai:{model}@...: {url!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise ConfigError(f"openai:{model}@...: put no credentials in the URL; name the variable holding the key "
                          "with the api_key_env option")
    return model, urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") or "/v1", "", ""))
