"""The four tasks as strategies: rating, cloze, multiple choice (prompting, §4) and
perplexity (APS), and the strategy of one condition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.errors import UnknownNameError
from lingdiag.parse.choice import read_letter
from lingdiag.records import (
    UNPARSED,
    UNPARSED_REASON,
    Generation,
    Item,
    LogLikelihood,
    LoglikelihoodRequest,
    Prediction,
    Request,
    Response,
)
from lingdiag.suites.explica import data
from lingdiag.suites.explica.options import Options
from lingdiag.suites.explica.parse import parse_connective, parse_rating
from lingdiag.suites.explica.prompts import TASKS, Prompting, authors_prompting, load_prompts, rng
from lingdiag.suites.explica.rules import RatingRule, lowest

LETTERS = ("A", "B", "C", "D")



@dataclass(frozen=True)
class RatingTask:
    """Rate each of the four joined sentences 1-10; the best-rated connective is the answer."""

    prompting: Prompting
    rule: RatingRule = RatingRule()
    """Tie and missing-rating rules (``rules.py``; the authors' by default)."""

    def render(self, item: Item) -> list[Request]:
        """Four requests, in ``CONNECTIVES`` order."""
        authors, examples = self.prompting.authors, self.prompting.examples(item)
        texts = [authors.rating(item, c) if authors else self.prompting.variant.template.format(
            sentence=item.fields["sentences"][c], examples=examples) for c in data.CONNECTIVES]
        return [self.prompting.request(t, [str(k) for k in range(1, 11)]) for t in texts]

    def origin(self, item: Item) -> str:
        """Where ``item``'s prompts came from: ``paper``, ``replayed`` or ``seeded``."""
        return self.prompting.origin(item, data.CONNECTIVES)

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """Ratings per connective (-1 when unreadable) and the connective ``rule`` chooses."""
        texts = [r.text if isinstance(r, Generation) else "" for r in responses]
        ratings = {c: parse_rating(t) for c, t in zip(data.CONNECTIVES, texts, strict=True)}
        label, tied = self.rule.choose(ratings)
        return Prediction(label, {"ratings": ratings, "tied": tied, "answers": dict(zip(data.CONNECTIVES, texts,
                                                                                         strict=True))})


@dataclass(frozen=True)
class ClozeTask:
    """Name the connective that links the two sentences, from the list."""

    prompting: Prompting

    def choices(self, item: Item) -> list[str]:
        """The connectives in this item's (seeded) order."""
        return rng(self.prompting.seed, item, "choices").sample(list(data.CONNECTIVES), len(data.CONNECTIVES))

    def render(self, item: Item) -> list[Request]:
        """One request."""
        choices = self.choices(item)
        if self.prompting.authors:
            return [self.prompting.request(self.prompting.authors.cloze(item, choices), choices)]
        text = self.prompting.variant.template.format(
            sentence_a=item.fields["sentence_a"], sentence_b=item.fields["sentence_b"],
            choices=", ".join(f"'{c}'" for c in choices), examples=self.prompting.examples(item))
        return [self.prompting.request(text, choices)]

    def origin(self, item: Item) -> str:
        """Where ``item``'s prompt came from: ``paper``, ``replayed`` or ``seeded``."""
        return self.prompting.origin(item, ("",))

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The named connective, or ``UNPARSED`` (with the reason: ``no-connective``)."""
        (answer,) = responses
        text = answer.text if isinstance(answer, Generation) else ""
        label = parse_connective(text)
        return Prediction(label, {"answer": text, **({UNPARSED_REASON: "no-connective"} if label == UNPARSED else {})})

    def answer_choices(self, item: Item) -> dict[str, str]:
        """The connectives, as a judge model may name them."""
        return {c: c for c in data.CONNECTIVES}


@dataclass(frozen=True)
class ChoiceTask:
    """Multiple choice: the four connectives as options A-D, answer with a letter."""

    prompting: Prompting

    def options(self, item: Item) -> dict[str, str]:
        """Letter → connective, shuffled per item by the seed."""
        order = rng(self.prompting.seed, item, "options").sample(list(data.CONNECTIVES), len(data.CONNECTIVES))
        return dict(zip(LETTERS, order, strict=True))

    def render(self, item: Item) -> list[Request]:
        """One request."""
        options = self.options(item)
        if self.prompting.authors:
            return [self.prompting.request(self.prompting.authors.mc(item, options), LETTERS)]
        text = self.prompting.variant.template.format(
            sentence_a=item.fields["sentence_a"], sentence_b=item.fields["sentence_b"],
            options="\n".join(f"- {k}. {c}" for k, c in options.items()), examples=self.prompting.examples(item))
        return [self.prompting.request(text, LETTERS)]

    def origin(self, item: Item) -> str:
        """``paper``, or ``seeded`` (the authors' open-model MC prompts were not published)."""
        return self.prompting.origin(item, ())

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The connective behind the chosen letter, or ``UNPARSED`` with the reader's reason."""
        (answer,) = responses
        text = answer.text if isinstance(answer, Generation) else ""
        options = self.options(item)
        reading = read_letter(text, options)
        letter = None if reading.reason is not None else reading.label
        return Prediction(options[letter] if letter else UNPARSED, {"options": options, "letter": letter,
                                                                    "answer": text, **reading.detail()})

    def answer_choices(self, item: Item) -> dict[str, str]:
        """The option letters and their connectives."""
        return self.options(item)


def perplexity(r: LogLikelihood) -> float:
    """Per-token perplexity ``exp(-logprob / n_tokens)``."""
    return math.exp(-r.logprob / max(r.n_tokens, 1))


@dataclass(frozen=True)
class PerplexityTask:
    """Score the four joined sentences; the lowest perplexity gives the connective (APS)."""

    def render(self, item: Item) -> list[Request]:
        """Four log-likelihood requests over whole sentences, in ``CONNECTIVES`` order."""
        return [LoglikelihoodRequest(context="", continuation=item.fields["sentences"][c]) for c in data.CONNECTIVES]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """Perplexity per connective and the connective with the lowest."""
        lls = [r for r in responses if isinstance(r, LogLikelihood)]
        ppl = {c: perplexity(r) for c, r in zip(data.CONNECTIVES, lls, strict=True)}
        return Prediction(lowest(ppl), {
            "perplexity": ppl, "logprob": {c: r.logprob for c, r in zip(data.CONNECTIVES, lls, strict=True)},
            "n_tokens": {c: r.n_tokens for c, r in zip(data.CONNECTIVES, lls, strict=True)}})



def strategy(task: str, shots: int = 0, decoding: str = "greedy", options: Options | None = None,
             seed: int = 0) -> Any:
    """The strategy of one condition.

    Args:
        task: rating, cloze, mc or perplexity.
        shots: 0, or 1 (one example per connective).
        decoding: greedy (answer cleaning) or constrained.
        options: Validated suite options.
        seed: The run's seed (shuffles of examples, choices and options).

    Returns:
        A ``Strategy``.
    """
    if task == "perplexity":
        return PerplexityTask()
    opts = options or Options()
    default, variants = load_prompts(opts.prompts)[task]
    name = opts.variant(task) or default
    if name not in variants:
        raise UnknownNameError(f"{task} prompt variant", name, variants)
    authors = authors_prompting(task, shots, seed, opts.authors_model, opts.authors_prompts) if opts.authors else None
    prompting = Prompting(variants[name], shots=shots, constrained=decoding == "constrained",
                          seed=seed, chat=opts.chat(), max_new_tokens=opts.new_tokens(), authors=authors,
                          sample_seed=seed if decoding == "constrained" and opts.constrained_sampling == "sampled"
                          else None)
    match task:
        case "rating":
            return RatingTask(prompting, RatingRule(opts.ties, opts.missing_ratings))
        case "cloze":
            return ClozeTask(prompting)
        case "mc":
            return ChoiceTask(prompting)
    raise UnknownNameError("explica task", task, TASKS)
