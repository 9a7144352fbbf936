"""The two formulations a suite file's condition can take: a templated chat prompt whose answer a
named lingdiag parser reads, or a choice among continuations by log-likelihood.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.errors import ConfigError
from lingdiag.parse.choice import parse_letter
from lingdiag.parse.labels import parse_label
from lingdiag.parse.rating import clean_answer, parse_rating
from lingdiag.prompts.loglik import NORMALISATIONS, Normalisation
from lingdiag.records import (
    UNPARSED,
    ChatMessage,
    Generation,
    GenerationRequest,
    Item,
    LogLikelihood,
    LoglikelihoodRequest,
    Prediction,
    Request,
    Response,
)
from lingdiag.suitefile.templates import Template, TemplateProblem


@dataclass(frozen=True)
class AnswerFormat:
    """What a parser needs besides the text."""

    labels: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    """Surface form → label pairs (``nli-label``)."""
    json_key: str = "label"
    options: tuple[tuple[str, str], ...] = ()
    """Letter → label pairs in prompt order (``choice-letter``)."""


Parser = Callable[[str, AnswerFormat], tuple[str, dict[str, Any]]]


def _nli_label(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    label, detail = parse_label(text, fmt.labels, aliases=dict(fmt.aliases), json_key=fmt.json_key)
    return label, {k: v for k, v in detail.items() if k in ("rule", "json")}


def _rating(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    rating = parse_rating(text)
    label = str(rating) if rating > 0 and (not fmt.labels or str(rating) in fmt.labels) else UNPARSED
    return label, {"rating": rating}


def _choice_letter(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    options = dict(fmt.options)
    letter = parse_letter(text, options)
    return (options[letter] if letter else UNPARSED), {"letter": letter}


def _free_text(text: str, fmt: AnswerFormat) -> tuple[str, dict[str, Any]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    answer = clean_answer(lines[0]) if lines else ""
    if not fmt.labels:
        return (answer or UNPARSED), {}
    by_lower = {lab.lower(): lab for lab in fmt.labels}
    return by_lower.get(answer.lower(), UNPARSED), {}


PARSERS: dict[str, Parser] = {
    "nli-label": _nli_label,  # lingdiag.parse.labels: JSON key, whole answer, leading label, answer phrase, last line
    "rating": _rating,  # lingdiag.parse.rating: the first 1-10 number, scale phrases removed
    "choice-letter": _choice_letter,  # lingdiag.parse.choice: a leading letter, "Answer: B", or an option's text
    "free-text": _free_text,  # the first line, cleaned; one of the labels (any case) where labels are given
}
"""Parser name → parser; a suite file names one (``parser: nli-label``)."""


def _render(template: Template, values: Mapping[str, Any], item: Item) -> str:
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
        turns = [ChatMessage("system", _render(self.system, item.fields, item))] if self.system else []
        if self.shots is not None:
            for ex in self.shots.examples(item):
                turns += [ChatMessage("user", _render(self.user, ex.fields, ex)),
                          ChatMessage("assistant", _render(self.shots.answer, {**ex.fields, "gold": ex.gold}, ex))]
        turns.append(ChatMessage("user", _render(self.user, item.fields, item)))
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


@dataclass(frozen=True)
class ContinuationChoice:
    """Each label's continuation scored after a context (a text template, or the chat prompt of
    ``prompt``); the best label is the answer, the first of equal scores winning.
    """

    choices: Mapping[str, Template]
    normalisation: Normalisation
    context: Template | None = None
    prompt: TemplatePrompt | None = None

    def render(self, item: Item) -> list[Request]:
        """One log-likelihood request per label, in declaration order."""
        continuations = [_render(t, item.fields, item) for t in self.choices.values()]
        if self.context is not None:
            ctx = _render(self.context, item.fields, item)
            return [LoglikelihoodRequest(context=ctx, continuation=c) for c in continuations]
        assert self.prompt is not None
        messages = self.prompt.messages(item)
        return [LoglikelihoodRequest(context="", continuation=c, messages=messages) for c in continuations]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The best label and every label's log-prob, token count and score."""
        lls = [r for r in responses if isinstance(r, LogLikelihood)]
        labels = list(self.choices)
        score = NORMALISATIONS[self.normalisation]
        scores = {lab: score(r) for lab, r in zip(labels, lls, strict=True)}
        best = max(labels, key=lambda lab: scores[lab])
        return Prediction(best, {"loglik": {lab: r.logprob for lab, r in zip(labels, lls, strict=True)},
                                 "n_tokens": {lab: r.n_tokens for lab, r in zip(labels, lls, strict=True)},
                                 "score": scores, "normalisation": self.normalisation})
