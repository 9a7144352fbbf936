"""A suite file's log-likelihood conditions: each label's continuation scored after a context
(``loglik``), whole sentences (``sentences``), region surprisals with predictions (``regions``).
The last two render the file's templates and hand them to the cores the built-in
``minimal-pairs`` and ``syntaxgym`` suites use (``lingdiag.prompts.sentences``/``surprisal``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lingdiag.prompts.formulas import Formula
from lingdiag.prompts.loglik import NORMALISATIONS, Normalisation
from lingdiag.prompts.sentences import likeliest, sentence_requests
from lingdiag.prompts.surprisal import predict, region_requests
from lingdiag.records import Item, LogLikelihood, LoglikelihoodRequest, Prediction, Request, Response
from lingdiag.scoring import LINGDIAG, ScoringPolicy
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
    policy: ScoringPolicy = LINGDIAG
    """Applies to a text context (a chat context's tokens are its template's)."""

    def render(self, item: Item) -> list[Request]:
        """One log-likelihood request per label, in declaration order."""
        continuations = [render(t, item.fields, item) for t in self.choices.values()]
        if self.context is not None:
            ctx = render(self.context, item.fields, item)
            return [LoglikelihoodRequest(context=ctx, continuation=c, policy=self.policy) for c in continuations]
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


@dataclass(frozen=True)
class SentenceChoice:
    """Each label's sentence scored whole under ``policy``; the likeliest label is the answer (the
    first label must be strictly likelier; ``lingdiag.prompts.sentences.likeliest``).
    """

    sentences: Mapping[str, Template]
    policy: ScoringPolicy = LINGDIAG

    def render(self, item: Item) -> list[Request]:
        """One request per label, in declaration order, each with an empty context."""
        return sentence_requests([("", render(t, item.fields, item)) for t in self.sentences.values()], self.policy)

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The likeliest sentence's label, every sentence's log-prob and token count."""
        return likeliest(list(self.sentences), responses)


@dataclass(frozen=True)
class RegionPredictions:
    """Each SyntaxGym condition's regions rendered and scored token by token under ``policy``;
    ``pass`` when every prediction holds (``lingdiag.prompts.surprisal.predict``).
    """

    conditions: Mapping[str, Sequence[Template]]
    predictions: Sequence[Formula]
    policy: ScoringPolicy = LINGDIAG
    separator: str = " "
    """What joins the regions: a space, or nothing in a script written without spaces."""

    def _contents(self, item: Item) -> dict[str, list[str]]:
        return {cond: [render(t, item.fields, item) for t in regions] for cond, regions in self.conditions.items()}

    def render(self, item: Item) -> list[Request]:
        """One per-token request per condition, in declaration order."""
        return region_requests(self._contents(item), self.policy, self.separator)

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """``pass`` or ``fail``, the region surprisals (bits) and each prediction's outcome."""
        numbers = {cond: [str(k + 1) for k in range(len(regions))] for cond, regions in self.conditions.items()}
        return predict(self._contents(item), numbers, self.predictions, self.policy, responses, self.separator)
