"""The one run configuration, validated at the edge (CLI, YAML, or Python), and the
validation of suite and backend options against their declared option models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lingdiag.errors import ConfigError

OptionsT = TypeVar("OptionsT", bound=BaseModel)


_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|secret|password|passwd|sig|signature)=)"
    r"[^&#;\s]*")
_USERINFO = re.compile(r"//[^/@\s]*@")


def redact_url_secrets(text: str) -> str:
    """``text`` with URL credentials (``?api_key=``, ``key=``, ``token=``..., ``user:pass@``) made ``***``."""
    return _USERINFO.sub("//***@", _QUERY_SECRET.sub(r"\1***", text))


class RunConfig(BaseModel):
    """Everything that determines a run's per-item records, and how it is executed.

    Two runs with equal configs, the same model weights and the same seed write
    byte-identical ``items.jsonl`` files.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    """Registered suite name (``lingdiag list``)."""
    model: str
    """Model spec: an embedded short name (``smollm2-135m``), ``hf:<hub id or dir>``,
    ``gguf:<file>`` or ``openai:<model>[@<base_url>]``."""
    dataset: str = "builtin"
    """``builtin``, ``official`` (fetched and checksummed) or a local path."""
    axes: dict[str, list[str]] = Field(default_factory=dict)
    """Axis selection, e.g. ``{"strategy": ["zero-shot", "cot"]}``; missing axes take defaults."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Suite options, e.g. ``{"max_new_tokens": 512}``; validated by the suite's option model."""
    limit: int | None = Field(default=None, ge=1)
    """Run on this many items per condition, spread evenly over the dataset order."""
    seed: int = 0
    """The one seed of the run (shuffles, sampled decoding); suites receive it, never as an option."""
    chunk_items: int = Field(default=64, ge=1)
    """Items sent to the backend per call; a killed run redoes at most one chunk."""
    batch_tokens: int | None = Field(default=None, ge=1)
    """Padded-token budget per batch (transformers backend); None keeps the backend's defaults."""
    trust_remote_code: bool = False
    """Let a hub model run its own code (transformers backend)."""
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Provider options, e.g. ``{"concurrency": 32}`` for ``openai:``; validated by the provider."""

    def recorded(self) -> dict[str, Any]:
        """The configuration as ``meta.json`` keeps it and resume compares it: no URL credentials."""
        data = self.model_dump(mode="json")
        data["model"] = redact_url_secrets(self.model)
        return data

    @classmethod
    def from_yaml(cls, path: Path) -> RunConfig:
        """Load a config file; errors name the file and the field."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            return cls.model_validate(data)
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"{path}: {e}") from e
        except ValidationError as e:
            raise ConfigError(f"{path}: {one_line(e)}") from e


def one_line(e: ValidationError) -> str:
    """The first error of a pydantic validation, as ``field: message``."""
    first = e.errors()[0]
    where = ".".join(map(str, first["loc"])) or "value"
    return f"{where}: {first['msg']}"


def validate_options(model: type[OptionsT], raw: Mapping[str, Any], what: str) -> OptionsT:
    """Validate ``raw`` against an option model; one-line errors name the option and the valid ones.

    Args:
        model: A pydantic model with ``extra="forbid"`` (its field names or aliases are the options).
        raw: The options as given (``-o key=value``, YAML, or Python).
        what: Whose options these are, e.g. ``suite 'explica'`` or ``openai: backend``.

    Returns:
        The validated options.

    Raises:
        ConfigError: an unknown option, or a value of the wrong type.
    """
    try:
        return model.model_validate(dict(raw))
    except ValidationError as e:
        names = sorted(f.alias or name for name, f in model.model_fields.items())
        valid = ", ".join(names) or "(none)"
        first = e.errors()[0]
        key = ".".join(map(str, first["loc"]))
        if first["type"] == "extra_forbidden":
            raise ConfigError(f"{what} has no option {key!r}; valid options: {valid}") from None
        raise ConfigError(f"{what} option {key!r}: {first['msg']} (got {first.get('input')!r}); "
                          f"valid options: {valid}") from None


class NoOptions(BaseModel):
    """The option model of a suite or backend that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)
