"""The judge pass of a run (``--reader judge:SPEC`` / ``judge-all:SPEC``): after the rules read a
chunk's answers, a second model reads those they left unparsed (or all of them), one request per
answer, in one backend call per chunk.

What a record keeps (``lingdiag.records``): the judge's reading under ``detail["judge"]``
(``label``, ``model``, ``reply``); where the rules left the answer unparsed and the judge read a
label, that label becomes the record's, ``correct`` follows it and ``detail["judged"]`` is true
(the rules' reason stays under ``detail["unparsed"]``). Where the rules read a label, it stays,
whatever the judge says: its reading is there to measure agreement. A judge request that fails
fails the item (``error``), which a resumed run sends again. Only strategies that name their
answer's choices (``lingdiag.suite.AnswerChoices``) and answer with one generation are read; an
empty or cut-off answer is never sent.

**The gate** (``judge:SPEC``): before a judge's labels are used, it reads a sample of the answers
the rules read (the first ``SAMPLE`` of them, or all of the first chunk that holds any, if
fewer); below ``THRESHOLD`` agreement with the rules there, the judge is refused in one line
naming its agreement and the run goes on with the rules alone. ``meta.json`` records the gate
(``judge_gate``: sample, agreeing, agreement, threshold, used). ``judge-all:SPEC`` measures
agreement on every answer and changes no label: it has no gate.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lingdiag.config import RunConfig, redact_url_secrets
from lingdiag.models.base import Backend, dispatch
from lingdiag.models.cache import cached
from lingdiag.parse.judge import JudgePolicy, question, reply_choice
from lingdiag.parse.thinking import separate
from lingdiag.records import JUDGE, JUDGED, UNPARSED, Generation, Item, ItemRecord, TextOutput
from lingdiag.rundir.parts import Part, register_part
from lingdiag.suite import AnswerChoices, Condition

SAMPLE = 50
"""Answers the rules read that a judge reads before its labels are used (all of them, if fewer)."""
THRESHOLD = 0.9
"""The least agreement with the rules on that sample for a judge's labels to be used."""


class JudgeGatePart(Part):
    """``meta.json``'s ``judge_gate``: how the judge did on the answers the rules read, and whether
    its labels were used.
    """

    sample: int
    agreeing: int
    agreement: float
    threshold: float
    used: bool


register_part("judge_gate", JudgeGatePart)


@dataclass
class Gate:
    """A judge's agreement with the rules on its sample so far, and the decision once taken."""

    sample: int = 0
    agreeing: int = 0
    decided: bool = False

    @property
    def agreement(self) -> float:
        """The share of the sample the judge read as the rules did."""
        return self.agreeing / self.sample if self.sample else 0.0

    @property
    def passed(self) -> bool:
        """Whether the judge's labels are used."""
        return self.decided and self.agreement >= THRESHOLD

    def resume(self, part: JudgeGatePart | None) -> None:
        """The gate as an earlier session of the run decided it (``meta.json``'s part), if it did."""
        if part is not None:
            self.sample, self.agreeing, self.decided = part.sample, part.agreeing, True

    def recorded(self) -> JudgeGatePart:
        """The gate as ``meta.json`` records it."""
        return JudgeGatePart(sample=self.sample, agreeing=self.agreeing, agreement=round(self.agreement, 4),
                             threshold=THRESHOLD, used=self.passed)

    def refusal(self, spec: str) -> str:
        """The one line that says the judge was refused."""
        return (f"judge {spec} refused: it read {self.agreeing} of {self.sample} answers the rules read as they did "
                f"({self.agreement:.0%}, below {THRESHOLD:.0%}); the run goes on with the rules alone")


@dataclass(frozen=True)
class Judge:
    """A judge model and which answers it reads."""

    policy: JudgePolicy
    backend: Backend
    gate: Gate = field(default_factory=Gate)

    def records(self, condition: Condition, chunk: Sequence[Item], records: Sequence[ItemRecord]) -> list[ItemRecord]:
        """``records`` (of ``chunk``'s items, in order) with the judge's readings (once it passed its gate)."""
        strategy = condition.strategy
        if not isinstance(strategy, AnswerChoices):
            return list(records)
        read = [(k, choices, answer) for k, (item, r) in enumerate(zip(chunk, records, strict=True))
                if (answer := _answer(r)) is not None and r.error is None
                and (choices := dict(strategy.answer_choices(item)))]  # a rating has no few choices to read
        if not self.policy.reads_all:
            self._sample(records, [(k, c, a) for k, c, a in read if records[k].label != UNPARSED])
            if not self.gate.passed:
                return list(records)
        asked = [(k, choices, answer) for k, choices, answer in read
                 if self.policy.reads_all or records[k].label == UNPARSED]
        if not asked:
            return list(records)
        replies = dispatch(self.backend, [question(answer, choices) for _, choices, answer in asked])
        out = list(records)
        for (k, choices, _), reply in zip(asked, replies, strict=True):
            out[k] = self._judged(out[k], choices, reply)
        return out

    def _sample(self, records: Sequence[ItemRecord], confident: list[tuple[int, dict[str, str], str]]) -> None:
        """The gate's sample from a chunk's answers the rules read, until it is decided."""
        if self.gate.decided or not confident:
            return
        taken = confident[:SAMPLE - self.gate.sample]
        replies = dispatch(self.backend, [question(answer, choices) for _, choices, answer in taken])
        for (k, choices, _), reply in zip(taken, replies, strict=True):
            text = separate(reply).text if isinstance(reply, Generation) and reply.error is None else ""
            self.gate.sample += 1
            self.gate.agreeing += choices.get(reply_choice(text, choices), UNPARSED) == records[k].label
        # Decided at SAMPLE answers, or with every answer of the first chunk that had any, if fewer.
        self.gate.decided = True
        if not self.gate.passed:
            print(f"warning: {self.gate.refusal(redact_url_secrets(self.policy.spec))}", file=sys.stderr, flush=True)

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
    """The record's one answer text (None: not one generation, cut off in its thinking, or empty: never sent)."""
    if len(r.outputs) != 1 or not isinstance(r.outputs[0], TextOutput) or r.outputs[0].unfinished:
        return None
    return r.outputs[0].text if r.outputs[0].text.strip() else None


def judge_config(config: RunConfig) -> RunConfig | None:
    """The judge model of ``config.reader`` as a configuration of its own (its spec, default provider
    options), which the run's one door checks at plan time and loads (``models.door.check_model`` and
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
