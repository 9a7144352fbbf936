"""Margins and fragility of log-likelihood decisions (pure: the condition's parser is any function of log-probs)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lingdiag.metrics.fragile import N_FRAGILE, N_RESCORED, Decision, counts, decide, table_note
from lingdiag.records import Generation, LogLikelihood


def _ll(logprob: float, n: int) -> LogLikelihood:
    return LogLikelihood(logprob=logprob, n_tokens=n, is_greedy=False)


def _by_sum(responses: Sequence[LogLikelihood]) -> str:
    return "abc"[max(range(len(responses)), key=lambda k: responses[k].logprob)]


def _by_mean(responses: Sequence[LogLikelihood]) -> str:
    return "abc"[max(range(len(responses)), key=lambda k: responses[k].logprob / responses[k].n_tokens)]


def test_the_margin_of_a_summed_choice_is_the_chosen_less_the_runner_up() -> None:
    answers = [_ll(-5.0, 2), _ll(-5.3, 1), _ll(-9.0, 1)]
    d = decide(_by_sum, answers, per_token=0.05)
    assert d is not None
    assert d.margin == pytest.approx(0.3, abs=1e-9)
    assert d.noise == pytest.approx(0.05 * 3)
    assert not d.fragile
    # The same choice under a noise whose bound for the two closest texts (3 tokens) exceeds 0.3.
    louder = decide(_by_sum, answers, per_token=0.11)
    assert louder is not None and louder.fragile and louder.margin == d.margin


def test_a_mean_scored_choice_is_checked_through_its_own_parser() -> None:
    # Means -2.5 (chosen) and -2.6: 0.1 apart per token; lowering the chosen by 2/3 of the shift and
    # raising the other by 1/3 moves the means t/3 each: they cross at 2t/3 = 0.1, t = 0.15 nats.
    answers = [_ll(-5.0, 2), _ll(-2.6, 1)]
    d = decide(_by_mean, answers, per_token=0.04)
    assert d is not None
    assert d.margin == pytest.approx(0.15, abs=1e-9)
    assert not d.fragile  # the two texts' bound: 3 tokens × 0.04 = 0.12 < 0.15
    louder = decide(_by_mean, answers, per_token=0.06)
    assert louder is not None and louder.fragile  # 0.18 > 0.15
    assert decide(_by_sum, answers, per_token=0.04) != d  # another parser, another decision and margin


def test_an_unflippable_decision_has_no_margin() -> None:
    d = decide(lambda rs: "same", [_ll(-1.0, 1), _ll(-50.0, 1)], per_token=1.0)
    assert d == Decision(margin=None, noise=2.0, fragile=False)


@pytest.mark.parametrize("answers", [
    [_ll(-1.0, 1)],
    [_ll(-1.0, 1), Generation(text="x")],
    [_ll(-1.0, 1), LogLikelihood(logprob=-2.0, n_tokens=1, is_greedy=False, error="boom")],
    [_ll(-1.0, 1), LogLikelihood(logprob=-2.0, n_tokens=1, is_greedy=False, token_logprobs=(-2.0,))],
])
def test_what_is_not_a_choice_between_whole_texts_is_not_checked(answers: list[object]) -> None:
    assert decide(_by_sum, answers, per_token=0.1) is None


def test_counts_and_the_table_line() -> None:
    assert counts([None, None]) == {}
    recorded = [Decision(0.1, 0.2, True, rescored=True).recorded(), Decision(1.0, 0.2, False).recorded(), None,
                Decision(0.1, 0.3, True).recorded()]
    assert counts(recorded) == {N_FRAGILE: 2, N_RESCORED: 1}
    assert Decision(1.0, 0.2, False).recorded() == {"margin": 1.0, "noise": 0.2, "fragile": False}
    note = table_note({"a": {"n": 4, N_FRAGILE: 2, N_RESCORED: 1}, "b": {"n": 3}})
    assert note.startswith("**Fragile decisions**") and "a: 2 of 4 (1 re-scored in float32)" in note
    assert "b:" not in note
    assert table_note({"b": {"n": 3}}) == ""
