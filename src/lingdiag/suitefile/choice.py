"""A suite file's log-likelihood condition: each label's continuation scored after a context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lingdiag.prompts.loglik import NORMALISATIONS, Normalisation
from lingdiag.records import Item, LogLikelihood, LoglikelihoodRequest, Prediction, Request, Response
from lingdiag.suitefile.prompt import TemplatePrompt, render
from lingdiag.suitefile.templates import Template


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
        continuations = [render(t, item.fields, item) for t in self.choices.values()]
        if self.context is not None:
            ctx = render(self.context, item.fields, item)
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
