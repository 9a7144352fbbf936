"""The judge pass of a run (``--reader judge:SPEC`` / ``judge-all:SPEC``): after the rules read a
chunk's answers, a second model reads those they left unparsed (or all of them), one request per
answer, in one backend call per chunk.

What a record keeps (``lingdiag.records``): the judge's reading under ``detail["judge"]``
(``label``, ``model``, ``reply``); where the rules left the answer unparsed and the judge read a
label, that label becomes the record's, ``correct`` follows it and ``detail["judged"]`` is true
(the rules' reason stays under ``detail["unparsed"]``). Where the rules read a label, it stays,
whatever the judge says: its reading is there to measure agreement. A judge request that fails
fails the item (``error``), which a resumed run sends again. Only strategies that name their
answer's choices (``lingdiag.suite.AnswerChoices``) and answer with one generation are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lingdiag.config import RunConfig, redact_url_secrets
from lingdiag.models.base import Backend, dispatch
from lingdiag.models.cache import cached
from lingdiag.parse.judge import JudgePolicy, question, reply_choice
from lingdiag.parse.thinking import separate
from lingdiag.records import JUDGE, JUDGED, UNPARSED, Generation, Item, ItemRecord, TextOutput
from lingdiag.suite import AnswerChoices, Condition


@dataclass(frozen=True)
class Judge:
    """A judge model and which answers it reads."""

    policy: JudgePolicy
    backend: Backend

    def records(self, condition: Condition, chunk: Sequence[Item], records: Sequence[ItemRecord]) -> list[ItemRecord]:
        """``records`` (of ``chunk``'s items, in order) with the judge's readings."""
        strategy = condition.strategy
        if not isinstance(strategy, AnswerChoices):
            return list(records)
        asked: list[tuple[int, dict[str, str]]] = []
        requests = []
        for k, (item, r) in enumerate(zip(chunk, records, strict=True)):
            answer = _answer(r)
            if answer is None or r.error is not None or (r.label != UNPARSED and not self.policy.reads_all):
                continue
            choices = dict(strategy.answer_choices(item))
            if not choices:  # e.g. a rating: no few choices to read
                continue
            asked.append((k, choices))
            requests.append(question(answer, choices))
        if not requests:
            return list(records)
        replies = dispatch(self.backend, requests)
        out = list(records)
        for (k, choices), reply in zip(asked, replies, strict=True):
            out[k] = self._judged(out[k], choices, reply)
        return out

    def _judged(self, r: ItemRecord, choices: dict[str, str], reply: Any) -> ItemRecord:
        if not isinstance(reply, Generation) or reply.error is not None:
            error = reply.error if isinstance(reply, Generation) else "no generation"
            return replace(r, error=f"judge {redact_url_secrets(self.policy.spec)}: {error}", correct=None)
        text = separate(reply).text
        key = reply_choice(text, choices)
        label = choices.get(key, UNPARSED)
        detail = {**r.detail, JUDGE: {"label": label, "model": redact_url_secrets(self.policy.spec), "reply": text}}
        if r.label != UNPARSED or label == UNPARSED:
            return replace(r, detail=detail)
        correct = None if r.gold is None else label == r.gold
        return replace(r, label=label, correct=correct, detail={**detail, JUDGED: True})


def _answer(r: ItemRecord) -> str | None:
    """The record's one answer text (None: not one generation)."""
    if len(r.outputs) != 1 or not isinstance(r.outputs[0], TextOutput) or r.outputs[0].unfinished:
        return None
    return r.outputs[0].text


def judge_config(config: RunConfig) -> RunConfig | None:
    """The judge model of ``config.reader`` as a configuration of its own (its spec, default provider
    options), which the run's one door checks at plan time and loads (``engine.run.check_model`` and
    ``load_model``); None: the rules alone.
    """
    if config.reader is None or config.reader == "rules":
        return None
    return RunConfig(suite=config.suite, model=JudgePolicy.parse(config.reader).spec)


def judge_of(config: RunConfig, load: Callable[[RunConfig], Backend]) -> Judge | None:
    """The judge ``config.reader`` names, its model loaded by ``load`` (the run's door) and its answers
    cached (None: the rules alone).
    """
    judging = judge_config(config)
    if judging is None or config.reader is None:
        return None
    return Judge(JudgePolicy.parse(config.reader), cached(load(judging)))
