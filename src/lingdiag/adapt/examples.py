"""Items as chat examples under a suite's own prompt strategy, answered with the gold label."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, Item
from lingdiag.suite import SUITES, Dataset


@dataclass(frozen=True, slots=True)
class Example:
    """One item rendered as the suite renders it, with the answer a correct model gives."""

    item_id: str
    request: GenerationRequest
    answer: str
    """The gold label, as the strategy's answer format names it."""


@dataclass(frozen=True, slots=True)
class ContrastPair:
    """A prompt with the correct and the biased completion (a steering vector's unit)."""

    request: GenerationRequest
    positive: str
    negative: str


def chat_examples(suite_name: str, items: Sequence[Item], strategy: str, seed: int = 0) -> list[Example]:
    """Render ``items`` with the suite's ``strategy`` (its first prompted request) and attach the gold.

    Raises:
        ConfigError: The suite has no such strategy, or the strategy asks no generation.
    """
    suite = SUITES.get(suite_name)
    axis = next((a for a in suite.axes if a.name == "strategy"), None)
    if axis is not None and strategy not in axis.values:
        raise ConfigError(f"unknown strategy {strategy!r} for {suite_name}; valid: {', '.join(axis.values)}")
    selection = {"strategy": [strategy]} if axis is not None else {}
    selection = {a.name: list(selection.get(a.name, a.default[:1])) for a in suite.axes}
    condition = suite.conditions(Dataset("training", items), selection, suite.parse_options({}), seed)[0]
    out = []
    for item in items:
        request = condition.strategy.render(item)[0]
        if not isinstance(request, GenerationRequest) or item.gold is None:
            raise ConfigError(f"item {item.id!r}: strategy {strategy!r} asks no generation, or the item has no gold")
        out.append(Example(item.id, request, item.gold))
    return out


def contrast_pairs(examples: Sequence[Example], biased: str) -> list[ContrastPair]:
    """Pairs of the gold answer against ``biased``, for the examples whose gold is not the biased answer."""
    return [ContrastPair(e.request, e.answer, biased) for e in examples if e.answer != biased]
