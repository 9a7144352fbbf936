"""Reading answers with a second model (``--reader judge:SPEC``): the policy, the question the
judge is asked and how its reply is read. The pass that sends the questions is the run's
(``lingdiag.engine.judge``); this module knows no model.

``judge:SPEC`` asks the judge to read the answers the rules leave unparsed; its label becomes
the record's, marked ``judged``. ``judge-all:SPEC`` asks it to read every answer, to measure its
agreement with the rules: the rules' label stays the record's wherever they read one. The rules
(``lingdiag.parse.reader``) stay the default (``rules``) and always read first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lingdiag.parse.normalise import normalise
from lingdiag.records import UNPARSED, ChatMessage, GenerationRequest

Mode = Literal["judge", "judge-all"]
MODES: tuple[Mode, ...] = ("judge", "judge-all")

SYSTEM = ("You read another model's answer to a multiple-choice or labelling question and report which one "
          "choice the answer commits to. You do not solve the question yourself.")
"""The judge's system turn."""
USER = """Choices:
{choices}

The answer to read, between the lines of dashes:
----------
{answer}
----------

Which one choice does this answer commit to? Reply with exactly one of: {keys}. Reply NONE if the \
answer commits to no choice or to several, or if it negates, questions, hedges, retracts or makes \
conditional the choice it names."""
"""The judge's user turn: the choices, the answer, the instruction (``str.format``)."""
MAX_NEW_TOKENS = 16
"""A judge replies with one choice or NONE."""


@dataclass(frozen=True, slots=True)
class JudgePolicy:
    """Which answers a judge model reads, and which model it is (``--reader``)."""

    mode: Mode
    spec: str
    """The judge's model spec (any ``--model`` spec: ``openai:NAME@URL``, ``hf:…``, an embedded name)."""

    @classmethod
    def parse(cls, text: str) -> JudgePolicy:
        """``judge:SPEC`` or ``judge-all:SPEC``.

        Raises:
            ValueError: another form (the message names the valid ones).
        """
        mode, sep, spec = text.partition(":")
        if not sep or mode not in MODES or not spec.strip():
            raise ValueError(f"--reader {text!r}: give rules (the default), judge:SPEC (a model reads the answers "
                             "the rules leave unparsed) or judge-all:SPEC (a model reads every answer, for its "
                             "agreement with the rules)")
        return cls(mode, spec.strip())

    @property
    def reads_all(self) -> bool:
        """Whether the judge reads every answer, not only those the rules left unparsed."""
        return self.mode == "judge-all"


def question(answer: str, choices: Mapping[str, str]) -> GenerationRequest:
    """The judge's request for ``answer``: ``choices`` maps what the answer may name (a label, a
    letter) to what it stands for (the same label, an option's text).
    """
    listed = "\n".join(f"- {k}" if k == v else f"- {k}: {v}" for k, v in choices.items())
    keys = ", ".join(choices)
    user = USER.format(choices=listed, answer=answer.strip(), keys=keys)
    return GenerationRequest(messages=(ChatMessage("system", SYSTEM), ChatMessage("user", user)),
                             max_new_tokens=MAX_NEW_TOKENS)


_WRAPPING = " \t\n*_`\"'.:!()[]"


def reply_choice(reply: str, choices: Mapping[str, str]) -> str:
    """The choice the judge's ``reply`` is (a key of ``choices``), or ``UNPARSED``: the whole reply,
    emphasis, quotes and a full stop aside, must be exactly one choice (any case). A reply that
    says more (an echo of the question ending in a choice, ``The answer is A``, ``maybe True``) or
    ``NONE`` is no reading.
    """
    body = " ".join(normalise(reply).split()).strip(_WRAPPING).lower()
    return next((k for k in choices if k.lower() == body), UNPARSED)
