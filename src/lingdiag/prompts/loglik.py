"""Competence scoring of a label prompt: each label's answer word scored as the first words of
the answer to the very chat prompt a generation condition asks, the best one taken as the
answer (lm-eval's multiple-choice scoring, on the prompted condition's own prompt).

The label set and answer words are the suite's (the words its parser accepts and its
prompt asks for); the join with the generated answers is :mod:`lingdiag.analysis.competence`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, Item, LogLikelihood, LoglikelihoodRequest, Prediction, Request, Response

SCORING = "scoring"
"""The axis that names how a condition answers: ``generate`` (the prompted answer) or ``loglik``."""
GENERATE = "generate"
LOGLIK = "loglik"
SCORINGS = (GENERATE, LOGLIK)
NORMALISATION = "normalisation"
"""The axis of a ``loglik`` condition naming how log-likelihoods are compared."""

Normalisation = Literal["total", "per-token"]

NORMALISATIONS: dict[str, Callable[[LogLikelihood], float]] = {
    # lm-eval's ``acc``: the probability of the whole answer word, i.e. of the event "the model
    # answers with this word". The default: the candidates are one- or two-token words, and a
    # per-token mean would reward a word for being split into more (likely) pieces.
    "total": lambda r: r.logprob,
    # Per-token mean (minicons' ``mean`` reduction); lm-eval's ``acc_norm`` divides by bytes instead.
    "per-token": lambda r: r.logprob / max(r.n_tokens, 1),
}
"""Normalisation name → score of one label's log-likelihood (higher is better)."""


class PromptStrategy(Protocol):
    """A strategy asking one chat question per item (``ChatPrompt``, a suite's prompt)."""

    def render(self, item: Item) -> Sequence[Request]:
        """The requests of ``item``: one chat generation request."""
        ...


@dataclass(frozen=True)
class LabelLoglik:
    """Score ``answers`` as continuations of ``prompt``'s chat messages; the best label is the answer.

    ``answers`` maps each label to the text the prompt asks the model to answer with (the
    labels' order breaks ties, first wins). For a prompt that asks for reasoning first, the
    scores say which label the model prefers to open its answer with, before any reasoning.
    """

    prompt: PromptStrategy
    answers: Mapping[str, str]
    normalisation: Normalisation = "total"

    def __post_init__(self) -> None:
        if self.normalisation not in NORMALISATIONS:
            raise ConfigError(f"unknown log-likelihood normalisation {self.normalisation!r}; "
                              f"valid: {', '.join(NORMALISATIONS)}")

    def render(self, item: Item) -> list[Request]:
        """One chat-context log-likelihood request per label, in ``answers`` order."""
        requests = list(self.prompt.render(item))
        if len(requests) != 1 or not isinstance(requests[0], GenerationRequest) or not requests[0].messages:
            raise ConfigError(f"item {item.id}: log-likelihood scoring needs a prompt of one chat request")
        messages = requests[0].messages
        return [LoglikelihoodRequest(context="", continuation=text, messages=messages)
                for text in self.answers.values()]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The label with the best score, and every label's log-prob, token count and score."""
        lls = [r for r in responses if isinstance(r, LogLikelihood)]
        labels = list(self.answers)
        score = NORMALISATIONS[self.normalisation]
        scores = {lab: score(r) for lab, r in zip(labels, lls, strict=True)}
        best = max(labels, key=lambda lab: scores[lab])  # max keeps the first of equal scores
        return Prediction(best, {
            "loglik": {lab: r.logprob for lab, r in zip(labels, lls, strict=True)},
            "n_tokens": {lab: r.n_tokens for lab, r in zip(labels, lls, strict=True)},
            "greedy": {lab: r.is_greedy for lab, r in zip(labels, lls, strict=True)},
            "score": scores, "normalisation": self.normalisation, "answers": dict(self.answers)})


def competence_axes(normalisation: Normalisation) -> dict[str, str]:
    """The axes a ``loglik`` condition adds to its prompted condition's axes."""
    return {SCORING: LOGLIK, NORMALISATION: normalisation}
