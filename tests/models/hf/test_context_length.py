"""A text longer than the model's context is a failed request once the model is known
(issue 35), never scored silently past the positions the model was trained on."""

from __future__ import annotations

from lingdiag.records import LoglikelihoodRequest


def test_a_text_past_the_context_is_failed_not_scored(smollm2: object) -> None:
    backend = smollm2
    context = backend.loaded.context_length  # type: ignore[attr-defined]
    assert context == 8192
    long, short = backend.loglikelihood([  # type: ignore[attr-defined]
        LoglikelihoodRequest("", " the" * (context + 5)), LoglikelihoodRequest("", "The cat sat.")])
    assert long.error is not None and f"longer than the model's context of {context} tokens" in long.error
    assert short.error is None and short.logprob < 0
