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
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import Field

from lingdiag.conditions.expander import Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, Item, Prediction, Request, Response
from lingdiag.rundir.parts import Part, register_part
from lingdiag.suite import Condition, Strategy
from lingdiag.thinking import DEFAULT_TAGS, ChecksThinking, Thinking, ThinkTags

if TYPE_CHECKING:
    from lingdiag.models.base import Backend, Capabilities

AXIS = "thinking"


PART = "thinking"
"""``meta.json``'s part: condition → the thinking setting it ran under, where the axis was given."""


class ThinkingPart(Part):
    """One condition's thinking setting (``lingdiag.thinking.Thinking.recorded``)."""

    setting: str
    budget: int
    effort: str
    tags: Annotated[list[str], Field(min_length=2, max_length=2)]
    """The opening and closing tag."""
    forced: bool


def think_tags(config: RunConfig) -> ThinkTags | None:
    """The inline thinking tags of ``config`` (None: no inline separation)."""
    return DEFAULT_TAGS if config.think_tags is None else ThinkTags.parse(config.think_tags)


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


@dataclass(frozen=True)
class ThinkingAxis(Plain):
    """``--thinking``: each condition once per setting; ``meta.json``'s ``thinking`` part."""

    chosen: tuple[Thinking, ...] = ()
    part: ClassVar[str] = PART
    takes: ClassVar[tuple[str, ...]] = (AXIS,)

    @classmethod
    def of(cls, config: RunConfig) -> ThinkingAxis:
        """The settings ``config`` names on the axis (none: the conditions stay as the suite makes them)."""
        values = config.axes.get(AXIS)
        return cls(() if values is None else tuple(settings(values, think_tags(config))))

    def expand(self, conditions: Sequence[Condition]) -> list[Condition]:
        """Each condition once per thinking setting."""
        if not self.chosen:
            return list(conditions)
        return [Condition(f"{c.name}/{slug(s)}", {**c.axes, AXIS: s.name}, ThinkingStrategy(c.strategy, s), c.items)
                for c in conditions for s in self.chosen]

    def require(self, capabilities: Capabilities, backend: str) -> None:
        """Refuse a backend that would ignore the settings (every setting would answer alike), when planned."""
        if self.chosen and not capabilities.thinking:
            raise ConfigError(f"--{AXIS}: backend {backend} takes no thinking setting; run without --{AXIS}, "
                              "or on a backend that thinks (embedded, hf:, gguf:, openai:)")

    def check(self, backend: Backend) -> None:
        """:meth:`require` of the loaded ``backend``, then a setting the model has no switch for refused
        before the first setting is scored.
        """
        self.require(backend.capabilities, str(backend.identity.get("backend")))
        if isinstance(backend, ChecksThinking):
            for s in self.chosen:
                backend.check_thinking(s)

    def recorded(self, ran: Ran) -> dict[str, Any] | None:
        """Condition → the setting it ran under, for the conditions sent to the backend."""
        return {c.name: c.strategy.setting.recorded() for c in ran.conditions
                if isinstance(c.strategy, ThinkingStrategy) and c.name not in ran.declined} or None


register_part(PART, dict[str, ThinkingPart])
register_axis('thinking', order=10, flags={AXIS: "off,on,budget:N,effort:low|medium|high: every condition once "
                                            "per thinking setting (docs/reasoning.md)"})(ThinkingAxis.of)
