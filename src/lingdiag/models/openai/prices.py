"""What a run on an OpenAI model will cost, estimated before it starts.

Tokens are counted from the rendered requests (characters / 4, OpenAI's rule of thumb:
no tokenizer download is needed) and output tokens are bounded by each request's
``max_new_tokens``, so the figure is an upper bound on output and an approximation of
input. Prices come from ``prices.yaml`` beside this module or the file named by
``$LINGDIAG_OPENAI_PRICES``; users edit them as OpenAI's list changes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml

from lingdiag.errors import ConfigError
from lingdiag.model_spec import OPENAI_URL, ModelSpec
from lingdiag.records import GenerationRequest, Request

PRICES_ENV = "LINGDIAG_OPENAI_PRICES"
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
"""Tokens a chat API adds per message (role and separators)."""


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float


def load_prices(path: Path | None = None) -> tuple[dict[str, Price], str]:
    """The price table and where it came from.

    Args:
        path: A YAML price file; default ``$LINGDIAG_OPENAI_PRICES``, else the packaged table.

    Returns:
        ``(model → Price, source description)``.
    """
    path = path or (Path(os.environ[PRICES_ENV]) if os.environ.get(PRICES_ENV) else None)
    try:
        text = path.read_text(encoding="utf-8") if path else \
            files("lingdiag.models.openai").joinpath("prices.yaml").read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        scale = 1_000_000 / float(data.get("per_tokens", 1_000_000))
        table = {str(m): Price(float(p["input"]) * scale, float(p["output"]) * scale)
                 for m, p in data["models"].items()}
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConfigError(f"price table {path}: {e} (expected models: {{NAME: {{input: X, output: Y}}}})") from e
    return table, str(path) if path else "the packaged prices.yaml of lingdiag.models.openai"


def price_for(model: str, table: dict[str, Price]) -> Price | None:
    """The price of ``model``: an exact entry, else the longest entry it starts with."""
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name)]
    return table[max(prefixes, key=len)] if prefixes else None


def request_tokens(request: Request) -> tuple[int, int]:
    """``(input tokens ≈ characters/4, most output tokens)`` of one request; a request that asks the
    model to think may spend its thinking budget as output tokens besides its answer's.
    """
    def count(text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    if not isinstance(request, GenerationRequest):
        chat = sum(count(m.content) + MESSAGE_OVERHEAD for m in request.messages)
        return chat + count(request.context + request.continuation), 1
    thinking = request.thinking.budget if request.thinking is not None and request.thinking.thinks else 0
    if request.messages:
        return sum(count(m.content) + MESSAGE_OVERHEAD for m in request.messages), request.max_new_tokens + thinking
    return count(request.prompt or ""), request.max_new_tokens + thinking


def dollars(amount: float) -> str:
    """``$1,234.50``, or four decimals below a cent so small runs do not read as free."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """Tokens and dollars of a planned run."""

    model: str
    requests: int
    input_tokens: int
    output_tokens: int
    """Upper bound: every request generating its ``max_new_tokens``."""
    price: Price | None
    source: str

    def summary(self) -> str:
        """One paragraph for the terminal."""
        tokens = (f"{self.requests:,} requests, ≈{self.input_tokens:,} input tokens, "
                  f"≤{self.output_tokens:,} output tokens")
        if self.price is None:
            return f"cost estimate for {self.model}: {tokens}; no listed price in {self.source}"
        cost_in = self.input_tokens * self.price.input / 1e6
        cost_out = self.output_tokens * self.price.output / 1e6
        return (f"cost estimate for {self.model}: {tokens} → ≈{dollars(cost_in)} + ≤{dollars(cost_out)} = "
                f"at most {dollars(cost_in + cost_out)} at ${self.price.input}/${self.price.output} per 1M "
                f"input/output tokens ({self.source}; edit it or set {PRICES_ENV}). Cached answers and "
                "finished items of a resumed run are not sent again.")


def estimate(model_spec: str, requests: Sequence[Request], prices: Path | None = None) -> CostEstimate | None:
    """The cost of sending ``requests`` to an OpenAI-hosted or listed ``openai:`` model, else None.

    Args:
        model_spec: The run's model spec (``openai:<model>[@<base_url>]``).
        requests: Every request the run plans to send (``lingdiag.engine.run.Plan.requests``).
        prices: A price file overriding the default table.

    Returns:
        The estimate; None for other providers and for unlisted models on other servers.
    """
    spec = ModelSpec.parse(model_spec)
    if spec.provider != "openai":
        return None
    model = spec.name
    table, source = load_prices(prices)
    price = price_for(model, table)
    if price is None and spec.url != OPENAI_URL:
        return None
    counts = [request_tokens(r) for r in requests]
    return CostEstimate(model, len(counts), sum(i for i, _ in counts), sum(o for _, o in counts), price, source)
