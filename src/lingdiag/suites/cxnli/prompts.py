"""Appendix E prompts (numeric-coding variations, user variants) and chain of thought
(Appendix F), as one user turn per item with the in-context examples.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import ConfigError
from lingdiag.records import (
    ChatMessage,
    Generation,
    GenerationRequest,
    Item,
    Prediction,
    Response,
)
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli.parse import parse_relation

USER = "user"
"""The ``variant`` value that runs every variant of the ``-o variants=FILE`` file."""
DEFAULT_VARIANT = "variation-2"


def prompts() -> dict[str, Any]:
    """The Appendix E prompt texts and formats (``data/cxnli_prompts.yaml``)."""
    text = files("lingdiag.suites.cxnli").joinpath("prompts.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


VARIANTS = (*prompts()["variants"], USER)


@dataclass(frozen=True)
class CxnliPrompt:
    """One user turn: instruction, in-context examples, then the question (Appendix E).

    ``pool`` holds in-context examples by construction. With ``by_schema`` the item's own
    construction form picks them (CxNLI examples; an Exp 2 item gets the examples of the
    Exp 1 construction it shares its form with, as in the authors' scripts); otherwise all
    of the pool's examples are shown (SNLI).
    """

    instruction: str
    example: str
    question: str
    pool: data.Pool
    by_schema: bool = False
    cot: bool = False
    max_new_tokens: int = 16
    stop: tuple[str, ...] = ("\nExample Premise", "\nPremise:")
    """Where a model would start another example (none for reasoning models, which reject it)."""

    def examples(self, item: Item) -> tuple[data.Triple, ...]:
        """The in-context triples shown with ``item``, in file order."""
        if self.by_schema:
            return self.pool.get(str(item.tags["schema"]), ())
        return tuple(t for group in self.pool.values() for t in group)

    def text(self, item: Item) -> str:
        """The whole prompt for ``item``."""
        shots = "".join(
            self.example.format(n=n, premise=t.premise, hypothesis=t.hypothesis, code=data.LABELS.index(t.label))
            for n, t in enumerate(self.examples(item), 1))
        return self.instruction + shots + self.question.format(**item.fields)

    def render(self, item: Item) -> list[GenerationRequest]:
        """One greedy generation; stops at ``stop``."""
        return [GenerationRequest(messages=(ChatMessage("user", self.text(item)),),
                                  max_new_tokens=self.max_new_tokens, stop=self.stop)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The relation, with the code, the rule that found it and the example count."""
        (answer,) = responses
        assert isinstance(answer, Generation)
        truncated = answer.n_tokens >= self.max_new_tokens
        label, rule = parse_relation(answer.text, self.cot, self.instruction.splitlines(), truncated)
        code = str(data.LABELS.index(label)) if label in data.LABELS else None
        return Prediction(label=label, detail={
            "code": code, "rule": rule, "n_examples": len(self.examples(item)), "n_tokens": answer.n_tokens,
            "truncated": truncated})

    def answer_choices(self, item: Item) -> dict[str, str]:
        """The relations, as a judge model may name them."""
        return {lab: lab for lab in data.LABELS}


def user_variants(path: Path | str) -> dict[str, str]:
    """Prompt instructions from a YAML/JSON file mapping variant name → instruction text."""
    path = Path(path)
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot read variants: {e}") from e
    if not isinstance(loaded, dict) or not loaded:
        raise ConfigError(f"{path}: expected a mapping of variant name to instruction text")
    out = {}
    for name, text in loaded.items():
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", str(name)):
            raise ConfigError(f"{path}: variant name {name!r} may use only letters, digits, '_', '.', '-'")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{path}: variant {name!r} needs a non-empty instruction text")
        out[f"{USER}:{name}"] = text.rstrip()
    return out
