"""Whole-text scoring: each label's text scored under a scoring policy, the likeliest label the
answer. Minimal pairs are the two-label case (BLiMP: the good sentence should be the likelier);
the built-in ``minimal-pairs`` suite and suite files' ``sentences`` formulation both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lingdiag.records import LogLikelihood, LoglikelihoodRequest, Prediction, Request, Response
from lingdiag.scoring import ScoringPolicy


def sentence_requests(texts: Sequence[tuple[str, str]], policy: ScoringPolicy) -> list[Request]:
    """One log-likelihood request per ``(context, text)``, in order, all under ``policy``."""
    return [LoglikelihoodRequest(context, text, policy=policy) for context, text in texts]


def likeliest(labels: Sequence[str], responses: Sequence[Response]) -> Prediction:
    """The label of the likeliest text, with every text's log-prob and token count.

    Equal log-probs go to the later label, so the first (the expected text) must be strictly
    likelier: BLiMP's rule, under which a pair scored alike is wrong.
    """
    lls = [r for r in responses if isinstance(r, LogLikelihood)]
    pairs = list(zip(labels, lls, strict=True))
    best = pairs[0]
    for label, r in pairs[1:]:
        if r.logprob >= best[1].logprob:
            best = (label, r)
    detail: dict[str, float | int] = {f"logprob_{label}": r.logprob for label, r in pairs}
    detail.update({f"n_tokens_{label}": r.n_tokens for label, r in pairs})
    return Prediction(best[0], detail)
