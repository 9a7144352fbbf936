"""The chat-prompt strategy: a system prompt, a user template, and the label parser."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lingdiag.parse.labels import parse_label
from lingdiag.records import (
    UNPARSED_REASON,
    ChatMessage,
    Constraint,
    Generation,
    GenerationRequest,
    Item,
    Prediction,
    Response,
)


@dataclass(frozen=True)
class ChatPrompt:
    """Ask one question per item and parse a label from the answer.

    ``user`` is a ``str.format`` template over the item's fields. ``examples`` are
    (user, assistant) turns placed before the question (few-shot).
    """

    system: str
    user: str
    labels: tuple[str, ...]
    max_new_tokens: int = 512
    aliases: Mapping[str, str] = field(default_factory=dict)
    json_key: str = "label"
    examples: tuple[tuple[str, str], ...] = ()
    constraint: Constraint | None = None

    def messages(self, item: Item) -> tuple[ChatMessage, ...]:
        """The chat turns for ``item``."""
        turns = [ChatMessage("system", self.system)] if self.system else []
        for question, answer in self.examples:
            turns += [ChatMessage("user", question), ChatMessage("assistant", answer)]
        turns.append(ChatMessage("user", self.user.format(**item.fields)))
        return tuple(turns)

    def render(self, item: Item) -> list[GenerationRequest]:
        """One greedy generation request."""
        return [GenerationRequest(messages=self.messages(item), max_new_tokens=self.max_new_tokens,
                                  constraint=self.constraint)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The label in the answer, or ``UNPARSED`` with the reason (``lingdiag.parse.reader``)."""
        (answer,) = responses
        assert isinstance(answer, Generation)
        label, detail = parse_label(answer.text, self.labels, aliases=self.aliases, json_key=self.json_key)
        read = {k: detail[k] for k in ("rule", UNPARSED_REASON) if k in detail}
        extra: dict[str, Any] = {"n_tokens": answer.n_tokens, **read,
                                 "truncated": answer.n_tokens >= self.max_new_tokens}
        if "json" in detail:
            extra["json"] = detail["json"]
        return Prediction(label=label, detail=extra)

    def answer_choices(self, item: Item) -> dict[str, str]:
        """Each label, as a judge model may name it."""
        return {lab: lab for lab in self.labels}
