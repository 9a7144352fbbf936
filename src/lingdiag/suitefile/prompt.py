"""A suite file's generation condition: a chat prompt rendered from sandboxed templates, with
examples drawn per item, whose answer a named parser reads.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from functools import cached_property
from typing import Any, overload

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

    @cached_property
    def _positions(self) -> dict[str, list[int]]:
        where: dict[str, list[int]] = {}
        for k, p in enumerate(self.pool):
            where.setdefault(p.id, []).append(k)
        return where

    def examples(self, item: Item) -> list[Item]:
        """The item's examples, in drawn order.

        The pool without the item is a view, not a copy: drawing for every item of a large
        pool stays linear (a copy per item made a 2-shot condition quadratic), and ``sample``
        draws the same examples from it as from the copy.
        """
        candidates = _Without(self.pool, self._positions.get(item.id, []))
        return random.Random(f"{self.seed}/{item.id}").sample(candidates, min(self.n, len(candidates)))


class _Without(SequenceABC[Item]):
    """``pool`` without the items at ``skip`` (sorted positions), as a read-only sequence."""

    def __init__(self, pool: Sequence[Item], skip: list[int]) -> None:
        self.pool, self.skip = pool, skip

    def __len__(self) -> int:
        return len(self.pool) - len(self.skip)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | Sequence[Item]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        k = index % len(self)
        for s in self.skip:  # one or none in practice: ids are unique
            if s <= k:
                k += 1
        return self.pool[k]


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

    def answer_choices(self, item: Item) -> dict[str, str]:
        """What a judge model may name: the option letters (``choice-letter``) or the labels; none
        for a rating or an open answer.
        """
        fmt = self.answer_format
        if self.parser == "choice-letter":
            return dict(fmt.options)
        return {lab: lab for lab in fmt.labels} if self.parser in ("nli-label", "free-text") else {}
