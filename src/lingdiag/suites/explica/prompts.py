"""Prompt wordings per task (variants, few-shot examples) and what every prompting task
shares: shots, decoding, output format (§4, Appendix E).
"""

from __future__ import annotations

import csv
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import ConfigError
from lingdiag.io.fetch import datasets_dir, official_path
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
AUTHORS_MAX_NEW_TOKENS = 5
"""The authors' cap for local models (``query_*_open.py``); their API runs (GPT) used 50."""
PROMPT_SOURCES = ("authors", "paper")
AUTHORS_MODEL = "Qwen2.5-7B-Instruct"
"""Whose published prompts are replayed by default: Llama, Falcon, Gemma and Qwen got the same
prompts; Mistral's zero-shot cloze order differs (``-o authors_model=Mistral-7B-Instruct-v0.3``)."""
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
    sources: list[tuple[str, Any]] = [("prompts.yaml", {k: v for k, v in _packaged().items() if k != "authors"})]
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


def _packaged() -> dict[str, Any]:
    doc = yaml.safe_load(files("lingdiag.suites.explica").joinpath("prompts.yaml").read_text(encoding="utf-8"))
    return doc if isinstance(doc, dict) else {}


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
    authors: Authors | None = None
    """The authors' prompts as run (``-o prompt_source=authors``); ``variant`` is then unused."""
    sample_seed: int | None = None
    """Constrained answers sampled with this seed (``-o constrained_sampling=sampled``); None: greedy."""

    def origin(self, item: Item, keys: Sequence[str]) -> str:
        """``paper``, or under ``authors`` whether ``item``'s prompts (one per key) were replayed or seeded."""
        return self.authors.origin(item, keys) if self.authors else "paper"

    def examples(self, item: Item) -> str:
        """The few-shot block for ``item`` (empty in zero-shot)."""
        if not self.shots:
            return ""
        shown = rng(self.seed, item, "examples").sample(self.variant.examples, len(self.variant.examples))
        return f"{self.variant.header}\n" + "\n".join(shown) + "\n\n"

    def request(self, text: str, choices: Sequence[str]) -> GenerationRequest:
        """A generation request for ``text``; constrained to ``choices`` if asked."""
        constraint = Constraint("choice", choices=tuple(choices), sample_seed=self.sample_seed) if self.constrained \
            else None
        cap = max(self.max_new_tokens, CONSTRAINED_MIN_TOKENS) if self.constrained else self.max_new_tokens
        if self.chat:
            return GenerationRequest(messages=(ChatMessage("user", text),), max_new_tokens=cap, constraint=constraint)
        return GenerationRequest(prompt=text, max_new_tokens=cap, constraint=constraint)


# -- the authors' prompts as run (-o prompt_source=authors) ----------------------------

REPLAYED, SEEDED = "replayed", "seeded"
_RESULT_FILES = {"rating": "acceptability/{shots}/accept_res_outlines_{model}_cleaned.tsv",
                 "cloze": "cloze/{shots}/cloze_res_outlines_{model}_cleaned.tsv"}
Key = tuple[str, str, str]
"""(Sentence_A, Sentence_B, connective); the connective is "" where a pair has one prompt."""


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"prompts.yaml: authors.{where}: expected a list of strings")
    return tuple(value)


@dataclass(frozen=True)
class AuthorsTemplates:
    """The authors' prompt texts (``prompts.yaml``, section ``authors``), rendered for a given order."""

    connectives: tuple[str, ...]
    """The authors' connective list, which their shuffles permute."""
    templates: Mapping[str, str]
    examples: Mapping[str, tuple[str, ...]]
    choices_join: Mapping[str, str]
    """Cloze: how the shuffled choices are joined, per shots (zero-shot: one quoted string)."""

    @staticmethod
    def load() -> AuthorsTemplates:
        """The packaged texts."""
        doc = _packaged().get("authors", {})
        return AuthorsTemplates(
            connectives=_strings(doc.get("connectives"), "connectives"),
            templates={t: str(doc[t]["template"]) for t in PROMPT_TASKS},
            examples={t: _strings(doc[t].get("examples"), f"{t}.examples") for t in PROMPT_TASKS},
            choices_join={str(k): str(v) for k, v in doc["cloze"]["choices_join"].items()})

    @staticmethod
    def _block(examples: Sequence[str]) -> str:
        return "Examples:\n" + "\n".join(examples) + "\n\n" if examples else ""

    def rating(self, sentence: str, order: Sequence[str], examples: Sequence[str] = ()) -> str:
        """The rating prompt of one joined sentence, connectives listed in ``order``."""
        return self.templates["rating"].format(connectives=", ".join(order), sentence=sentence,
                                               examples=self._block(examples))

    def cloze(self, sentence_a: str, sentence_b: str, order: Sequence[str], examples: Sequence[str] = ()) -> str:
        """The cloze prompt; zero-shot (no ``examples``) shows the choices as one quoted string."""
        join = self.choices_join["1" if examples else "0"]
        return self.templates["cloze"].format(sentence_a=sentence_a, sentence_b=sentence_b,
                                              choices=join.join(order), examples=self._block(examples))

    def mc(self, sentence_a: str, sentence_b: str, options: Mapping[str, str], examples: Sequence[str] = ()) -> str:
        """The multiple-choice prompt (the authors' GPT prompt), ``options`` letter → connective."""
        return self.templates["mc"].format(sentence_a=sentence_a, sentence_b=sentence_b,
                                           options="\n".join(f"- {k}. {c}" for k, c in options.items()),
                                           examples=self._block(examples))


def result_file(task: str, shots: int, model: str) -> str | None:
    """The published result file of ``task`` (relative to ``explica_results/``), if one holds prompts."""
    pattern = _RESULT_FILES.get(task)
    return pattern.format(shots="fewshot" if shots else "zeroshot", model=model) if pattern else None


def read_replay(path: Path, task: str) -> dict[Key, str]:
    """The ``prompt`` column of a published result file per (pair, connective) row; empty without one."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        if "prompt" not in (reader.fieldnames or ()):
            return {}
        out: dict[Key, str] = {}
        for row in reader:
            conn = row["conn_in_list"].strip() if task == "rating" else ""
            out.setdefault((row["Sentence_A"].strip(), row["Sentence_B"].strip(), conn), row["prompt"])
    return out


def load_replay(task: str, shots: int, model: str, directory: str | Path | None = None) -> dict[Key, str]:
    """The authors' per-row prompts of ``task`` × ``shots`` for ``model``: from ``directory`` (the
    layout of ``explica_results/``) or else the fetched, checksummed copy; empty when absent.
    """
    rel = result_file(task, shots, model)
    if rel is None:
        return {}
    if directory is not None:
        if not Path(directory).is_dir():
            raise ConfigError(f"authors_prompts: {directory} is not a directory")
        path = Path(directory) / rel
        return read_replay(path, task) if path.is_file() else {}
    if not (datasets_dir() / "explica_results" / rel).is_file():
        return {}
    return read_replay(official_path("explica-results", f"explica_results/{rel}"), task)


@dataclass(frozen=True)
class Authors:
    """The authors' prompts of one condition: each row's published text where the result file has
    it (replayed), else the same template with the connective and example order drawn by ``rng``.
    """

    texts: AuthorsTemplates
    shots: int = 0
    seed: int = 0
    replay: Mapping[Key, str] = field(default_factory=dict)

    def _examples(self, task: str, item: Item, what: str) -> list[str]:
        shown = self.texts.examples[task] if self.shots else ()
        return rng(self.seed, item, what).sample(list(shown), len(shown))

    def _key(self, item: Item, connective: str) -> Key:
        return (str(item.fields["sentence_a"]), str(item.fields["sentence_b"]), connective)

    def rating(self, item: Item, connective: str) -> str:
        """The prompt rating ``item`` joined by ``connective`` (connectives shuffled per row)."""
        found = self.replay.get(self._key(item, connective))
        if found is not None:
            return found
        order = rng(self.seed, item, f"connectives:{connective}").sample(self.texts.connectives,
                                                                          len(self.texts.connectives))
        return self.texts.rating(item.fields["sentences"][connective], order,
                                 self._examples("rating", item, f"examples:{connective}"))

    def cloze(self, item: Item, order: Sequence[str]) -> str:
        """The cloze prompt of ``item``; ``order`` is the choice order when not replayed."""
        found = self.replay.get(self._key(item, ""))
        if found is not None:
            return found
        return self.texts.cloze(item.fields["sentence_a"], item.fields["sentence_b"], order,
                                self._examples("cloze", item, "examples"))

    def mc(self, item: Item, options: Mapping[str, str]) -> str:
        """The multiple-choice prompt of ``item`` (never replayed: no open-model MC file was published)."""
        return self.texts.mc(item.fields["sentence_a"], item.fields["sentence_b"], options,
                             self._examples("mc", item, "examples"))

    def origin(self, item: Item, keys: Sequence[str]) -> str:
        """``replayed`` when every prompt of ``item`` (one per connective key) is published, else ``seeded``."""
        found = bool(keys) and all(self._key(item, k) in self.replay for k in keys)
        return REPLAYED if found else SEEDED


@lru_cache(maxsize=16)
def _replay(task: str, shots: int, model: str, directory: str | None) -> Mapping[Key, str]:
    return load_replay(task, shots, model, directory)


def authors_prompting(task: str, shots: int, seed: int, model: str = AUTHORS_MODEL,
                      directory: str | None = None) -> Authors:
    """The authors' prompts of one condition, with ``model``'s published prompts where available."""
    return Authors(AuthorsTemplates.load(), shots, seed, _replay(task, shots, model, directory))
