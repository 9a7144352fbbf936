"""The thinking axis: every suite's conditions under several thinking settings.

``lingdiag run SUITE --thinking off,on,budget:256`` runs each of the suite's conditions once per
setting (``lingdiag.thinking``), built-in suites and suite files alike: the run wraps each
condition's strategy so that its generation requests carry the setting, names the condition
``<condition>/thinking-<setting>`` and adds ``thinking`` to its axes. A suite needs no code for
it; the scoring-policy axis, by contrast, is one the log-likelihood suites declare themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, Item, Prediction, Request, Response
from lingdiag.suite import Condition, Strategy
from lingdiag.thinking import DEFAULT_TAGS, Thinking, ThinkTags

AXIS = "thinking"


def settings(values: Sequence[str], tags: ThinkTags | None = DEFAULT_TAGS) -> list[Thinking]:
    """The settings named on the axis, in order, each once."""
    chosen = [Thinking.parse(v, tags or DEFAULT_TAGS) for v in dict.fromkeys(values)]
    if not chosen:
        raise ConfigError("--thinking names no setting; valid: off, on, budget:N, effort:low|medium|high")
    return chosen


def slug(setting: Thinking) -> str:
    """The setting as a condition-name part (``thinking-budget-8``: no colon in a name)."""
    return "thinking-" + setting.name.replace(":", "-")


@dataclass(frozen=True, slots=True)
class ThinkingStrategy:
    """A suite's strategy whose generation requests carry a thinking setting; parsing is the suite's."""

    inner: Strategy
    setting: Thinking

    def render(self, item: Item) -> Sequence[Request]:
        """The inner strategy's requests, generations carrying the setting."""
        return [replace(r, thinking=self.setting) if isinstance(r, GenerationRequest) else r
                for r in self.inner.render(item)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The inner strategy's prediction (the responses hold answers only: the run separated them)."""
        return self.inner.parse(item, responses)


def expand(conditions: Sequence[Condition], chosen: Sequence[Thinking]) -> list[Condition]:
    """Each condition once per thinking setting."""
    return [Condition(f"{c.name}/{slug(s)}", {**c.axes, AXIS: s.name}, ThinkingStrategy(c.strategy, s), c.items)
            for c in conditions for s in chosen]
