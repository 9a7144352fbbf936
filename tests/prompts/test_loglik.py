"""LabelLoglik: label words scored after a chat prompt, on the mock backend (deterministic)."""

from __future__ import annotations

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.base import dispatch
from lingdiag.models.mock import MockBackend
from lingdiag.prompts.chat import ChatPrompt
from lingdiag.prompts.loglik import LabelLoglik
from lingdiag.records import GenerationRequest, Item, LogLikelihood, LoglikelihoodRequest

LABELS = ("True", "False", "Unknown")
PROMPT = ChatPrompt(system="Be strict.", user="P: {premise} H: {hypothesis}", labels=LABELS)
ITEM = Item("i1", {"premise": "A", "hypothesis": "B"}, "True")


def test_requests_share_the_prompt_chat_turns() -> None:
    strat = LabelLoglik(PROMPT, {lab: lab for lab in LABELS})
    requests = strat.render(ITEM)
    (gen,) = PROMPT.render(ITEM)
    assert [r.continuation for r in requests if isinstance(r, LoglikelihoodRequest)] == list(LABELS)
    assert all(isinstance(r, LoglikelihoodRequest) and r.messages == gen.messages and r.context == ""
               for r in requests)


def test_mock_backend_scores_chat_requests_deterministically() -> None:
    def fn(r: LoglikelihoodRequest) -> float:
        return -float(len(r.continuation)) - len(r.messages)

    strat = LabelLoglik(PROMPT, {lab: lab for lab in LABELS})
    first = dispatch(MockBackend(loglik_fn=fn), strat.render(ITEM))
    assert first == dispatch(MockBackend(loglik_fn=fn), strat.render(ITEM))
    pred = strat.parse(ITEM, first)
    assert pred.label == "True" and pred.detail["loglik"] == {"True": -6.0, "False": -7.0, "Unknown": -9.0}


@pytest.mark.parametrize(("normalisation", "expected"), [("total", "False"), ("per-token", "True")])
def test_normalisation_decides(normalisation: str, expected: str) -> None:
    strat = LabelLoglik(PROMPT, {lab: lab for lab in LABELS}, normalisation)  # type: ignore[arg-type]
    responses = [LogLikelihood(-3.0, 3, False), LogLikelihood(-2.0, 1, False), LogLikelihood(-9.0, 1, False)]
    pred = strat.parse(ITEM, responses)
    assert pred.label == expected and pred.detail["normalisation"] == normalisation
    assert pred.detail["score"]["True"] == (-3.0 if normalisation == "total" else -1.0)


def test_ties_go_to_the_first_label_and_bad_settings_are_refused() -> None:
    strat = LabelLoglik(PROMPT, {lab: lab for lab in LABELS})
    assert strat.parse(ITEM, [LogLikelihood(-1.0, 1, False)] * 3).label == "True"
    with pytest.raises(ConfigError, match="normalisation"):
        LabelLoglik(PROMPT, {}, "mean")  # type: ignore[arg-type]

    class RawPrompt:
        def render(self, item: Item) -> list[GenerationRequest]:
            return [GenerationRequest(prompt="raw")]

    with pytest.raises(ConfigError, match="one chat request"):
        LabelLoglik(RawPrompt(), {"True": "True"}).render(ITEM)
