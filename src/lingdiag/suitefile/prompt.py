"""A suite file's generation condition: a chat prompt rendered from sandboxed templates, with
examples drawn per item, whose answer a named parser reads.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.errors import ConfigError
from lingdiag.records import ChatMessage, Generation, GenerationRequest, Item, Prediction, Request, Response
from lingdiag.suitefile.parsers import PARSERS, AnswerFormat
from lingdiag.suitefile.templates import Template, TemplateProblem


def render(template: Template, values: Mapping[str, Any], item: Item) -> str:
    """``template`` on ``values``; a refusal names the item (a one-line ``ConfigError``)."""
    try:
        return template.render(values)
    except TemplateProblem as e:
        raise ConfigError(f"item {item.id}: {e}") from None


@dataclass(frozen=True)
class ShotDraw:
    """``n`` examples per item from ``pool`` (the item itself excluded), seeded by ``seed`` and the item id."""

    n: int
    pool: tuple[Item, ...]
    seed: int
    answer: Template

    def examples(self, item: Item) -> list[Item]:
        """The item's examples, in drawn order."""
        candidates = [p for p in self.pool if p.id != item.id]
        return random.Random(f"{self.seed}/{item.id}").sample(candidates, min(self.n, len(candidates)))


@dataclass(frozen=True)
class TemplatePrompt:
    """A chat prompt rendered from templates; the named parser reads the answer."""

    system: Template | None
    user: Template
    parser: str
    answer_format: AnswerFormat
    max_new_tokens: int = 512
    shots: ShotDraw | None = None

    def messages(self, item: Item) -> tuple[ChatMessage, ...]:
        """The chat turns for ``item``, examples first."""
        turns = [ChatMessage("system", render(self.system, item.fields, item))] if self.system else []
        if self.shots is not None:
            for ex in self.shots.examples(item):
                turns += [ChatMessage("user", render(self.user, ex.fields, ex)),
                          ChatMessage("assistant", render(self.shots.answer, {**ex.fields, "gold": ex.gold}, ex))]
        turns.append(ChatMessage("user", render(self.user, item.fields, item)))
        return tuple(turns)

    def render(self, item: Item) -> list[Request]:
        """One greedy generation request."""
        return [GenerationRequest(messages=self.messages(item), max_new_tokens=self.max_new_tokens)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The parser's label (or ``UNPARSED``), with the answer's token count and truncation."""
        (answer,) = responses
        assert isinstance(answer, Generation)
        label, detail = PARSERS[self.parser](answer.text, self.answer_format)
        return Prediction(label, {"n_tokens": answer.n_tokens, "truncated": answer.n_tokens >= self.max_new_tokens,
                                  **detail})
