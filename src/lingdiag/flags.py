"""The ``key=value`` flags and the flags that reach a model's provider (``--model-option``, ``--dtype``),
declared once for ``lingdiag run``, ``lingdiag adapt`` and a suite's own model commands (``explica
select-prompt``): the CLI package cannot lend them to suites, since nothing in the library imports it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer


def option_value(text: str) -> Any:
    """A ``key=value`` option's value: JSON if it parses (numbers, booleans, lists), else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def key_values(pairs: list[str]) -> dict[str, Any]:
    """``["a=1", "b=x"]`` → ``{"a": 1, "b": "x"}``."""
    return {k: option_value(v) for k, _, v in (o.partition("=") for o in pairs)}


def model_options(model_option: list[str] | None, dtype: str | None) -> dict[str, Any]:
    """``RunConfig.model_options`` of ``--model-option`` pairs and ``--dtype`` (which wins over a
    ``dtype=`` pair, as in ``lingdiag run``).
    """
    options = key_values(model_option or [])
    if dtype:
        options["dtype"] = dtype
    return options


ModelOption = Annotated[list[str] | None, typer.Option(
    "--model-option", help="Model provider option key=value (repeatable), e.g. concurrency=32 for openai: "
    "models or device=cuda for a transformers model; an option the provider does not take is refused, "
    "naming the valid ones.")]
"""``--model-option`` (``RunConfig.model_options``)."""
Dtype = Annotated[str | None, typer.Option(
    help="Weights dtype of a transformers model: auto (default: float32 on the CPU, bfloat16 with "
    "--model-option device=cuda), float32, bfloat16, bfloat16-mixed (CPU only: bf16 matrix products, the rest "
    "float32) or float16; named in the model's name. See bench/README.md for its price.")]
"""``--dtype`` (``RunConfig.model_options["dtype"]``)."""
