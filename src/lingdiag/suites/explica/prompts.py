"""Prompt wordings per task (variants, few-shot examples) and what every prompting task
shares: shots, decoding, output format (§4, Appendix E).
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import ConfigError
from lingdiag.records import (
    ChatMessage,
    Constraint,
    GenerationRequest,
    Item,
)

TASKS = ("rating", "cloze", "mc", "perplexity")
PROMPT_TASKS = ("rating", "cloze", "mc")
SHOTS = ("0", "1")
DECODINGS = ("greedy", "constrained")
MAX_NEW_TOKENS = 8
"""The paper's answers are one word or number (the authors generated 5 tokens)."""
CONSTRAINED_MIN_TOKENS = 8
"""Enough for the longest valid answer plus the forced stop token."""
_FIELDS = {"rating": {"sentence", "examples"}, "cloze": {"sentence_a", "sentence_b", "choices", "examples"},
           "mc": {"sentence_a", "sentence_b", "options", "examples"}}




@dataclass(frozen=True)
class Variant:
    """One prompt wording of a task."""

    name: str
    template: str
    examples: tuple[str, ...]
    """One few-shot example per connective."""
    header: str


def _variant(task: str, name: str, raw: Any, defaults: Mapping[str, Any], where: str) -> Variant:
    spec = raw if isinstance(raw, dict) else {"template": raw}
    template = spec.get("template")
    examples = spec.get("examples", defaults.get("examples"))
    header = spec.get("header", defaults.get("header", "Examples:"))
    if not isinstance(template, str) or not template.strip():
        raise ConfigError(f"{where}: {task}.variants.{name}: a template string is needed")
    if not isinstance(examples, list) or len(examples) != 4 or not all(isinstance(e, str) for e in examples):
        raise ConfigError(f"{where}: {task}.variants.{name}: 'examples' must list 4 strings (one per connective)")
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as e:
        raise ConfigError(f"{where}: {task}.variants.{name}: bad template ({e}); write literal braces as {{{{ }}}}")\
            from e
    unknown, missing = used - _FIELDS[task], _FIELDS[task] - used
    if unknown or missing:
        raise ConfigError(f"{where}: {task}.variants.{name}: template "
                          + (f"uses unknown fields {sorted(unknown)} " if unknown else "")
                          + (f"lacks fields {sorted(missing)} " if missing else "")
                          + f"(fields: {', '.join(sorted(_FIELDS[task]))})")
    return Variant(name, template, tuple(examples), str(header))


def load_prompts(user_file: str | Path | None = None) -> dict[str, tuple[str, dict[str, Variant]]]:
    """Prompt variants per task: ``{task: (default name, {name: Variant})}``.

    Args:
        user_file: A YAML file in the layout of ``data/explica_prompts.yaml`` whose
            variants (and ``default``) are added to or replace the packaged ones.

    Returns:
        The merged prompt sets, validated.
    """
    sources: list[tuple[str, Any]] = [
        ("prompts.yaml", yaml.safe_load(files("lingdiag.suites.explica").joinpath("prompts.yaml")
                                                .read_text(encoding="utf-8")))]
    if user_file:
        try:
            sources.append((str(user_file), yaml.safe_load(Path(user_file).read_text(encoding="utf-8"))))
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"prompts file {user_file}: {e}") from e
    out: dict[str, tuple[str, dict[str, Variant]]] = {}
    for where, doc in sources:
        if not isinstance(doc, dict) or set(doc) - set(PROMPT_TASKS):
            raise ConfigError(f"{where}: expected a mapping with keys among {', '.join(PROMPT_TASKS)}")
        for task, spec in doc.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("variants", {}), dict):
                raise ConfigError(f"{where}: {task}: expected a mapping with 'variants'")
            default, variants = out.get(task, ("", {}))
            base = {"examples": [*variants[default].examples] if default else None,
                    "header": variants[default].header if default else "Examples:"}
            base.update({k: spec[k] for k in ("examples", "header") if k in spec})
            for name, raw in spec.get("variants", {}).items():
                variants[name] = _variant(task, str(name), raw, base, where)
            default = str(spec.get("default", default))
            if default not in variants:
                raise ConfigError(f"{where}: {task}: default variant {default!r} is not defined")
            out[task] = (default, variants)
    return out


def rng(seed: int, item: Item, what: str) -> random.Random:
    """A shuffle's generator: deterministic per seed and item, independent of ``--limit`` and order."""
    return random.Random(f"{seed}:{item.id}:{what}")


@dataclass(frozen=True)
class Prompting:
    """What every prompting task shares: wording, shots, decoding and output format."""

    variant: Variant
    shots: int = 0
    constrained: bool = False
    seed: int = 0
    max_new_tokens: int = MAX_NEW_TOKENS
    chat: bool = True
    """Send the prompt as one user turn (chat template) rather than as raw text."""

    def examples(self, item: Item) -> str:
        """The few-shot block for ``item`` (empty in zero-shot)."""
        if not self.shots:
            return ""
        shown = rng(self.seed, item, "examples").sample(self.variant.examples, len(self.variant.examples))
        return f"{self.variant.header}\n" + "\n".join(shown) + "\n\n"

    def request(self, text: str, choices: Sequence[str]) -> GenerationRequest:
        """A generation request for ``text``; constrained to ``choices`` if asked."""
        constraint = Constraint("choice", choices=tuple(choices)) if self.constrained else None
        cap = max(self.max_new_tokens, CONSTRAINED_MIN_TOKENS) if self.constrained else self.max_new_tokens
        if self.chat:
            return GenerationRequest(messages=(ChatMessage("user", text),), max_new_tokens=cap, constraint=constraint)
        return GenerationRequest(prompt=text, max_new_tokens=cap, constraint=constraint)
