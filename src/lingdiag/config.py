"""The one run configuration, validated at the edge (CLI, YAML, or Python)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lingdiag.errors import ConfigError


class RunConfig(BaseModel):
    """Everything that determines a run's per-item records.

    Two runs with equal configs, the same model weights and the same seed write
    byte-identical ``items.jsonl`` files.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    """Registered suite name (``lingdiag list``)."""
    model: str
    """Model spec: an embedded short name (``smollm2-135m``), ``hf:<hub id or dir>``,
    ``gguf:<file>``, ``openai:<model>[@<base_url>]`` or ``mock:<script>``."""
    dataset: str = "builtin"
    """``builtin``, ``official`` (fetched and checksummed) or a local path."""
    axes: dict[str, list[str]] = Field(default_factory=dict)
    """Axis selection, e.g. ``{"strategy": ["zero-shot", "cot"]}``; missing axes take defaults."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Suite options, e.g. ``{"max_new_tokens": 512}``."""
    limit: int | None = Field(default=None, ge=1)
    """Run on this many items per condition, spread evenly over the dataset order."""
    seed: int = 0
    chunk_items: int = Field(default=64, ge=1)
    """Items sent to the backend per call; a killed run redoes at most one chunk."""

    @classmethod
    def from_yaml(cls, path: Path) -> RunConfig:
        """Load a config file; errors name the file and the field."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            return cls.model_validate(data)
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"{path}: {e}") from e
        except ValidationError as e:
            raise ConfigError(f"{path}: {e}") from e
