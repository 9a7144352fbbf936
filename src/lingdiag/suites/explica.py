"""ExpliCa: explicit causal and temporal relations (so / because / then / after).

Tasks (§4, Appendix E): acceptability rating (1-10) of each of the four joined
sentences, cloze (name the masked connective), multiple choice (letter A-D) and
perplexity (the joined sentence with the lowest per-token perplexity gives the
prediction: APS). Prompting tasks run zero-shot or with one example per connective, with
greedy decoding plus the answer cleaning of Appendix D, or with constrained decoding that
can only produce a valid answer (the paper used Outlines; lingdiag uses xgrammar).

Metrics (§5, Appendix G-I): accuracy over causal and temporal pairs, overall and per
TYPE × ORDER (Tables 6-9), confusion matrices (Fig. 12), accuracy per frequency bin when
the data has one (Table 10), Spearman correlation of model ratings (and perplexities)
with the human mean ratings per class and on UNRELATED pairs (Table 13), and the rating
distributions of model and humans (Fig. 5).

Choices made where the paper is silent, all recorded per item in ``detail``:
- Rating ties: the highest rating wins and ties are broken in the order because, so,
  after, then, as the gold labels are (and as the authors' ``idxmax`` did);
  ``-o ties=miss`` counts a tie as a miss instead. Missing ratings are -1; a pair with
  no rating at all is unparsed.
- Shuffles (few-shot example order, cloze choice order, MC option order) use
  ``random.Random(f"{seed}:{item id}:<what>")``: deterministic per seed and independent of
  ``--limit`` and item order.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from lingdiag.datasets import explica as data
from lingdiag.datasets.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.errors import ConfigError, DatasetError, UnknownNameError
from lingdiag.metrics.core import accuracy, fmt, markdown_table, proportion_ci
from lingdiag.records import (
    UNPARSED,
    ChatMessage,
    Constraint,
    Generation,
    GenerationRequest,
    Item,
    ItemRecord,
    LogLikelihood,
    LoglikelihoodRequest,
    Prediction,
    Request,
    Response,
)
from lingdiag.suite import Axis, Condition, Dataset, Suite, register_suite

OFFICIAL_FILE = OfficialFile(
    url=f"{RAW}/martinadh/ExpliCa/87f8706e3869ca2f2a85a0d7d077a61f729f2a63/data/explica/explica.csv",
    local="explica/explica.csv",
    sha256="28e6078164da1f315a52eebb6748701031cd016745e36296b691ef27eac23f63",
)
register_official("explica", (OFFICIAL_FILE,))

TASKS = ("rating", "cloze", "mc", "perplexity")
PROMPT_TASKS = ("rating", "cloze", "mc")
SHOTS = ("0", "1")
DECODINGS = ("greedy", "constrained")
LETTERS = ("A", "B", "C", "D")
TIE = "tie"
"""The label of a rating tie under ``-o ties=miss``."""
MAX_NEW_TOKENS = 8
"""The paper's answers are one word or number (the authors generated 5 tokens)."""
CONSTRAINED_MIN_TOKENS = 8
"""Enough for the longest valid answer plus the forced stop token."""
_FIELDS = {"rating": {"sentence", "examples"}, "cloze": {"sentence_a", "sentence_b", "choices", "examples"},
           "mc": {"sentence_a", "sentence_b", "options", "examples"}}
_OPTIONS = {"seed", "prompts", "max_new_tokens", "format", "ties", *(f"prompt_{t}" for t in PROMPT_TASKS)}


# -- prompts ------------------------------------------------------------------------------

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
        ("explica_prompts.yaml", yaml.safe_load(files("lingdiag").joinpath("data/explica_prompts.yaml")
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


def _rng(seed: int, item: Item, what: str) -> random.Random:
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
        shown = _rng(self.seed, item, "examples").sample(self.variant.examples, len(self.variant.examples))
        return f"{self.variant.header}\n" + "\n".join(shown) + "\n\n"

    def request(self, text: str, choices: Sequence[str]) -> GenerationRequest:
        """A generation request for ``text``; constrained to ``choices`` if asked."""
        constraint = Constraint("choice", choices=tuple(choices)) if self.constrained else None
        cap = max(self.max_new_tokens, CONSTRAINED_MIN_TOKENS) if self.constrained else self.max_new_tokens
        if self.chat:
            return GenerationRequest(messages=(ChatMessage("user", text),), max_new_tokens=cap, constraint=constraint)
        return GenerationRequest(prompt=text, max_new_tokens=cap, constraint=constraint)


# -- Appendix D answer cleaning and the parsers ---------------------------------------------

_SPECIAL = re.compile(r"<\|[^|>]*\|>|</?s>|<end_of_turn>|<start_of_turn>|<eos>|<pad>|\[/?INST\]")
_SCALE = re.compile(r"\b(?:out of|/)\s*10\b|\b(?:from\s+)?1\s*(?:to|-|–)\s*10\b", re.I)


def clean_answer(text: str) -> str:
    """Appendix D: drop end-of-text tags, markdown symbols, quotes and extra spaces."""
    text = _SPECIAL.sub(" ", text)
    text = re.sub(r"[*_`#\"“”‘’]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" '.,:;!?()[]{}-")


def parse_rating(text: str) -> int:
    """The rating in an answer, or -1.

    The rating is the first number once scale phrases ("out of 10", "1 to 10") are
    removed, if it is an integer 1-10. Numbers that label something are not ratings: a
    list marker opening the answer ("1. The sentence ..."), or a number after
    "sentence", "event", "example" or "step" ("Sentence 1: ...").
    """
    body = _SCALE.sub(" ", clean_answer(text))
    body = re.sub(r"^\d+[.)]\s+(?=\S)", " ", body)
    body = re.sub(r"\b(?:sentence|event|example|step)\s+\d+", " ", body, flags=re.I)
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w])", body)
    if not m:
        return -1
    value = float(m.group(1))
    return int(value) if value.is_integer() and 1 <= value <= 10 else -1


def parse_connective(text: str, allowed: Sequence[str] = data.CONNECTIVES) -> str:
    """The connective in a cloze answer: the first word if it is one and is not the start
    of a list ("then or after", "so, because"), else the only connective mentioned;
    ``UNPARSED`` when none or several are (out-of-list is a miss).
    """
    words = re.findall(r"[a-z]+", clean_answer(text).lower())
    if words and words[0] in allowed:
        listed = [w for w in words[1:3] if w not in ("or", "and")][:1]
        return UNPARSED if listed and listed[0] in allowed else words[0]
    mentioned = {w for w in words if w in allowed}
    return mentioned.pop() if len(mentioned) == 1 else UNPARSED


def parse_letter(text: str, options: Mapping[str, str]) -> str | None:
    """The option letter in a multiple-choice answer, or None.

    Accepted: a leading letter ("B", "B.", "(B)", "B) so", "B - so"), "Answer: B", or the
    answer being exactly one of the listed connectives.
    """
    body = clean_answer(text)
    m = re.match(r"[(\[]?([A-D])(?:$|[.):,\]]|\s*[-–]\s|\s+(?:so|because|then|after)\b)", body)
    if m:
        return m.group(1)
    m = re.search(r"\banswer\b\s*(?:is)?\s*[:=]?\s*[(\[]?([A-D])\b", body, re.I)
    if m:
        return m.group(1)
    by_word = {c: k for k, c in options.items()}
    return by_word.get(body.lower())


# -- the four tasks -----------------------------------------------------------------------

@dataclass(frozen=True)
class RatingTask:
    """Rate each of the four joined sentences 1-10; the best-rated connective is the answer."""

    prompting: Prompting
    ties: str = "order"
    """``order``: break ties by ``TIE_ORDER``; ``miss``: a tie is the label ``tie``."""

    def render(self, item: Item) -> list[Request]:
        """Four requests, in ``CONNECTIVES`` order."""
        examples = self.prompting.examples(item)
        return [self.prompting.request(self.prompting.variant.template.format(
            sentence=item.fields["sentences"][c], examples=examples), [str(k) for k in range(1, 11)])
            for c in data.CONNECTIVES]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """Ratings per connective (-1 when missing) and the chosen connective."""
        texts = [r.text if isinstance(r, Generation) else "" for r in responses]
        ratings = {c: parse_rating(t) for c, t in zip(data.CONNECTIVES, texts, strict=True)}
        valid = {c: float(v) for c, v in ratings.items() if v != -1}
        top = max(valid.values()) if valid else None
        tied = sum(v == top for v in valid.values()) > 1
        if not valid:
            label = UNPARSED
        elif tied and self.ties == "miss":
            label = TIE
        else:
            label = data.best(valid)
        return Prediction(label, {"ratings": ratings, "tied": tied, "answers": dict(zip(data.CONNECTIVES, texts,
                                                                                         strict=True))})


@dataclass(frozen=True)
class ClozeTask:
    """Name the connective that links the two sentences, from the list."""

    prompting: Prompting

    def choices(self, item: Item) -> list[str]:
        """The connectives in this item's (seeded) order."""
        return _rng(self.prompting.seed, item, "choices").sample(list(data.CONNECTIVES), len(data.CONNECTIVES))

    def render(self, item: Item) -> list[Request]:
        """One request."""
        choices = self.choices(item)
        text = self.prompting.variant.template.format(
            sentence_a=item.fields["sentence_a"], sentence_b=item.fields["sentence_b"],
            choices=", ".join(f"'{c}'" for c in choices), examples=self.prompting.examples(item))
        return [self.prompting.request(text, choices)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The named connective, or ``UNPARSED``."""
        (answer,) = responses
        text = answer.text if isinstance(answer, Generation) else ""
        return Prediction(parse_connective(text), {"answer": text})


@dataclass(frozen=True)
class ChoiceTask:
    """Multiple choice: the four connectives as options A-D, answer with a letter."""

    prompting: Prompting

    def options(self, item: Item) -> dict[str, str]:
        """Letter → connective, shuffled per item by the seed."""
        order = _rng(self.prompting.seed, item, "options").sample(list(data.CONNECTIVES), len(data.CONNECTIVES))
        return dict(zip(LETTERS, order, strict=True))

    def render(self, item: Item) -> list[Request]:
        """One request."""
        options = self.options(item)
        text = self.prompting.variant.template.format(
            sentence_a=item.fields["sentence_a"], sentence_b=item.fields["sentence_b"],
            options="\n".join(f"- {k}. {c}" for k, c in options.items()), examples=self.prompting.examples(item))
        return [self.prompting.request(text, LETTERS)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The connective behind the chosen letter, or ``UNPARSED``."""
        (answer,) = responses
        text = answer.text if isinstance(answer, Generation) else ""
        options = self.options(item)
        letter = parse_letter(text, options)
        return Prediction(options[letter] if letter else UNPARSED, {"options": options, "letter": letter,
                                                                    "answer": text})


def perplexity(r: LogLikelihood) -> float:
    """Per-token perplexity ``exp(-logprob / n_tokens)``."""
    return math.exp(-r.logprob / max(r.n_tokens, 1))


@dataclass(frozen=True)
class PerplexityTask:
    """Score the four joined sentences; the lowest perplexity gives the connective (APS)."""

    def render(self, item: Item) -> list[Request]:
        """Four log-likelihood requests over whole sentences, in ``CONNECTIVES`` order."""
        return [LoglikelihoodRequest(context="", continuation=item.fields["sentences"][c]) for c in data.CONNECTIVES]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """Perplexity per connective and the connective with the lowest."""
        lls = [r for r in responses if isinstance(r, LogLikelihood)]
        ppl = {c: perplexity(r) for c, r in zip(data.CONNECTIVES, lls, strict=True)}
        return Prediction(data.best(ppl, lower_is_better=True), {
            "perplexity": ppl, "logprob": {c: r.logprob for c, r in zip(data.CONNECTIVES, lls, strict=True)},
            "n_tokens": {c: r.n_tokens for c, r in zip(data.CONNECTIVES, lls, strict=True)}})


# -- suite wiring -----------------------------------------------------------------------

def load(spec: str) -> Dataset:
    """``builtin`` (the project's own pairs), ``official`` (fetched) or a CSV/TSV path."""
    if spec == "builtin":
        return Dataset("builtin", data.builtin_items(), source={"builtin": "lingdiag explica_builtin.yaml"})
    path = official_path("explica", OFFICIAL_FILE.local) if spec == "official" else Path(spec)
    return Dataset(spec, data.load_csv(path), source={str(path): OFFICIAL_FILE.sha256 if spec == "official" else ""})


def strategy(task: str, shots: int = 0, decoding: str = "greedy", options: Mapping[str, Any] | None = None) -> Any:
    """The strategy of one condition.

    Args:
        task: rating, cloze, mc or perplexity.
        shots: 0, or 1 (one example per connective).
        decoding: greedy (answer cleaning) or constrained.
        options: Suite options (``prompts``, ``prompt_<task>``, ``max_new_tokens``,
            ``format``, ``ties``, ``seed``).

    Returns:
        A ``Strategy``.
    """
    opts = dict(options or {})
    if task == "perplexity":
        return PerplexityTask()
    default, variants = load_prompts(opts.get("prompts"))[task]
    name = str(opts.get(f"prompt_{task}", default))
    if name not in variants:
        raise UnknownNameError(f"{task} prompt variant", name, variants)
    fmt_ = str(opts.get("format", "chat"))
    if fmt_ not in ("chat", "raw"):
        raise ConfigError(f"option format={fmt_!r}: use chat or raw")
    prompting = Prompting(variants[name], shots=shots, constrained=decoding == "constrained",
                          seed=int(opts.get("seed", 0)), chat=fmt_ == "chat",
                          max_new_tokens=int(opts.get("max_new_tokens", MAX_NEW_TOKENS)))
    match task:
        case "rating":
            ties = str(opts.get("ties", "order"))
            if ties not in ("order", "miss"):
                raise ConfigError(f"option ties={ties!r}: use order or miss")
            return RatingTask(prompting, ties)
        case "cloze":
            return ClozeTask(prompting)
        case "mc":
            return ChoiceTask(prompting)
    raise UnknownNameError("explica task", task, TASKS)


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Mapping[str, Any]) -> list[Condition]:
    """Task × shots × decoding; perplexity has neither shots nor decoding, so it runs once."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ConfigError(f"unknown explica option(s) {', '.join(sorted(unknown))}; "
                          f"valid: {', '.join(sorted(_OPTIONS))}")
    out = []
    for task in axes["task"]:
        if task == "perplexity":
            out.append(Condition("perplexity", {"task": "perplexity"}, strategy("perplexity"), dataset.items))
            continue
        for shots in axes["shots"]:
            for decoding in axes["decoding"]:
                out.append(Condition(f"{task}/{shots}-shot/{decoding}",
                                     {"task": task, "shots": shots, "decoding": decoding},
                                     strategy(task, int(shots), decoding, options), dataset.items))
    return out


# -- metrics ------------------------------------------------------------------------------

def spearman(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """Spearman ρ and its p-value; NaN when fewer than 3 pairs or a side is constant."""
    n = len(xs)
    if n < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return {"rho": math.nan, "p": math.nan, "n": n}
    from scipy.stats import spearmanr

    res = spearmanr(xs, ys)
    return {"rho": round(float(res.statistic), 6), "p": float(res.pvalue), "n": n}


def _scores(r: ItemRecord) -> dict[str, float] | None:
    for key in ("ratings", "perplexity", "scores"):
        if key in r.detail:
            return {c: float(v) for c, v in r.detail[key].items()}
    return None


def _correlations(records: Sequence[ItemRecord]) -> dict[str, dict[str, float]]:
    groups: dict[str, tuple[list[float], list[float]]] = {g: ([], []) for g in (*data.CLASSES, data.UNRELATED, "all")}
    for r in records:
        scores = _scores(r)
        if scores is None:
            continue
        for c, v in scores.items():
            if "ratings" in r.detail and v == -1:
                continue  # no rating given: not a point of the correlation
            for g in (r.tags["relation"], "all"):
                groups[g][0].append(v)
                groups[g][1].append(float(r.fields["human"][c]))
    return {g: spearman(xs, ys) for g, (xs, ys) in groups.items()}


def _distributions(records: Sequence[ItemRecord]) -> dict[str, dict[str, dict[str, int]]]:
    out: dict[str, dict[str, dict[str, int]]] = {}
    for subset, related in (("related", True), ("unrelated", False)):
        model: Counter[str] = Counter()
        human: Counter[str] = Counter()
        for r in records:
            if (r.gold is not None) == related and "ratings" in r.detail:
                model.update(str(v) for v in r.detail["ratings"].values())
                human.update(str(min(10, max(1, math.floor(float(v) + 0.5)))) for v in r.fields["human"].values())
        keys = ["-1", *map(str, range(1, 11))]
        out[subset] = {"model": {k: model.get(k, 0) for k in keys}, "human": {k: human.get(k, 0) for k in keys[1:]}}
    return out


def metrics(records: Sequence[ItemRecord]) -> dict[str, Any]:
    """Accuracy (APS for perplexity) over causal/temporal pairs, per class, confusion
    matrix, per frequency bin; for ratings and perplexities also Spearman ρ and (ratings)
    the distributions. Pure: recomputed offline from ``items.jsonl``.
    """
    related = [r for r in records if r.gold is not None]
    by_class = {c: [r for r in related if r.tags["relation"] == c] for c in data.CLASSES}
    confusion: dict[str, Counter[str]] = {}
    for r in records:
        predicted = data.class_of(r.label) if r.label in data.RELATION else r.label
        confusion.setdefault(r.tags["relation"], Counter())[predicted] += 1
    out: dict[str, Any] = {
        "accuracy": accuracy(related),
        "accuracy_ci95": proportion_ci(related, lambda r: bool(r.correct)) if related else None,
        "by_class": {c: accuracy(rs) for c, rs in by_class.items()},
        "by_type": {t: accuracy([r for r in related if r.tags["type"] == t]) for t in ("causal", "temporal")},
        "by_order": {o: accuracy([r for r in related if r.tags["order"] == o]) for o in ("iconic", "anti-iconic")},
        "n_related": len(related), "n_unrelated": len(records) - len(related),
        "n_by_class": {c: len(rs) for c, rs in by_class.items()},
        "confusion": {g: dict(sorted(c.items())) for g, c in sorted(confusion.items())},
        "predicted": dict(sorted(Counter(r.label for r in records).items())),
    }
    bins = sorted({str(r.tags["frequency_bin"]) for r in related if "frequency_bin" in r.tags})
    if bins:
        out["by_frequency_bin"] = {b: accuracy([r for r in related if str(r.tags.get("frequency_bin")) == b])
                                   for b in bins}
    if any(_scores(r) is not None for r in records):
        out["spearman"] = _correlations(records)
    rated = [r for r in records if "ratings" in r.detail]
    if rated:
        values = [v for r in rated for v in r.detail["ratings"].values()]
        out["rating_missing_rate"] = sum(v == -1 for v in values) / len(values)
        out["rating_tie_rate"] = sum(bool(r.detail.get("tied")) for r in rated) / len(rated)
        out["rating_distribution"] = _distributions(rated)
    return out


# -- tables ---------------------------------------------------------------------------------

_CLASS_HEADERS = ["Caus. Ic.", "Temp. Ic.", "Caus. a.Ic.", "Temp. a.Ic."]


def _condition_cells(condition: str) -> list[str]:
    parts = condition.split("/")
    if len(parts) == 3:
        return [parts[0], parts[1].replace("-shot", ""), parts[2]]
    return [f"{parts[0]} (APS)" if parts[0] in ("perplexity", "imported") else parts[0], "–", "–"]


def _order(condition: str) -> tuple[int, str]:
    task = condition.split("/")[0]
    return (TASKS.index(task) if task in TASKS else len(TASKS), condition)


def table(rows: Sequence[tuple[str, str, Mapping[str, Any]]]) -> str:
    """Tables 6-8 (accuracy and APS per TYPE × ORDER), Table 13 (Spearman ρ), Table 10
    (per frequency bin, when present) and the rating distributions of Fig. 5.
    """
    rows = sorted(rows, key=lambda r: (_order(r[1]), r[0]))
    text = "## ExpliCa accuracy on causal/temporal pairs (Tables 6-8 layout; APS for perplexity)\n\n"
    text += markdown_table(
        ["Task", "Shots", "Decoding", "Model", "All", *_CLASS_HEADERS, "Unparsed", "N"],
        [[*_condition_cells(c), m, x["accuracy"], *[x["by_class"][k] for k in data.CLASSES],
          x.get("unparsed_rate"), x.get("n_related")] for m, c, x in rows])
    corr = [(m, c, x) for m, c, x in rows if "spearman" in x]
    if corr:
        text += "\n## Spearman ρ with human mean ratings (Table 13 layout; perplexity ρ is expected negative)\n\n"
        text += markdown_table(
            ["Task", "Shots", "Decoding", "Model", *_CLASS_HEADERS, "Unrel.", "All"],
            [[*_condition_cells(c), m, *[x["spearman"][k]["rho"] for k in (*data.CLASSES, data.UNRELATED, "all")]]
             for m, c, x in corr])
    binned = [(m, c, x) for m, c, x in rows if "by_frequency_bin" in x]
    if binned:
        bins = sorted({b for _, _, x in binned for b in x["by_frequency_bin"]})
        text += "\n## Accuracy per frequency bin (Table 10 layout)\n\n"
        text += markdown_table(["Task", "Shots", "Decoding", "Model", "Overall", *bins],
                               [[*_condition_cells(c), m, x["accuracy"], *[x["by_frequency_bin"].get(b) for b in bins]]
                                for m, c, x in binned])
    rated = [(m, c, x) for m, c, x in rows if "rating_distribution" in x]
    if rated:
        keys = ["-1", *map(str, range(1, 11))]
        text += "\n## Rating distributions, model vs human means rounded (Fig. 5)\n\n"
        text += markdown_table(
            ["Condition", "Model", "Pairs", "Source", *keys, "Ties"],
            [[c, m, subset, src, *[x["rating_distribution"][subset][src].get(k, "–") for k in keys],
              fmt(x["rating_tie_rate"]) if src == "model" else ""]
             for m, c, x in rated for subset in ("related", "unrelated") for src in ("model", "human")])
    return text


register_suite(Suite(
    name="explica",
    description="ExpliCa: causal vs temporal connectives (so/because/then/after), prompting vs perplexity",
    axes=(Axis("task", TASKS, TASKS, "rating, cloze, mc (§4 prompting tasks) and perplexity (APS)"),
          Axis("shots", SHOTS, SHOTS, "0: zero-shot; 1: one example per connective"),
          Axis("decoding", DECODINGS, DECODINGS, "greedy + Appendix D cleaning, or constrained (xgrammar)")),
    load=load,
    conditions=conditions,
    metrics=metrics,
    table=table,
    stat_tags=("relation", "type", "order", "additional_dimension"),
))


# -- scoring results computed elsewhere ------------------------------------------------------

@dataclass(frozen=True)
class ImportResult:
    """Records built from an outside score file, and what could not be used."""

    records: list[ItemRecord]
    unmatched: list[dict[str, Any]]
    """Rows whose sentence pair or connective is not in the dataset: line, reason, text."""
    incomplete: list[str]
    """Item ids that lack a score for some connective (left out of the metrics)."""


def _norm(text: str) -> str:
    return " ".join(text.split())


def import_scores(
    path: Path,
    items: Sequence[Item],
    *,
    connective_col: str = "connective",
    score_col: str = "score",
    lower_is_better: bool = False,
) -> ImportResult:
    """Match a long-format score file (one row per ordered pair and connective) to ``items``.

    Args:
        path: CSV or TSV with ``Sentence_A``, ``Sentence_B``, a connective and a score column.
        items: The dataset the scores refer to.
        connective_col: Column holding so/because/then/after.
        score_col: Column holding the numeric score.
        lower_is_better: Lowest score wins (perplexity, surprisal); else highest (rating, log-prob).

    Returns:
        Records shaped like a run's, plus the unmatched rows and incomplete items.
    """
    columns, rows = data.read_table(path)
    for col in ("Sentence_A", "Sentence_B", connective_col, score_col):
        if col not in columns:
            raise DatasetError(f"missing column (columns: {', '.join(columns)})", path=path, field=col)
    by_text = {(_norm(it.fields["sentence_a"]), _norm(it.fields["sentence_b"])): it for it in items}
    scores: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    unmatched = []
    for n, row in enumerate(rows, 2):
        item = by_text.get((_norm(row["Sentence_A"]), _norm(row["Sentence_B"])))
        connective = row[connective_col].strip().lower()
        if item is None or connective not in data.CONNECTIVES:
            reason = "sentence pair not in the dataset" if item is None else f"unknown connective {connective!r}"
            unmatched.append({"line": n, "reason": reason, "Sentence_A": row["Sentence_A"],
                              "Sentence_B": row["Sentence_B"], "connective": row[connective_col]})
            continue
        try:
            value = float(row[score_col])
        except ValueError:
            raise DatasetError(f"expected a number, found {row[score_col]!r}", path=path, row=n,
                               field=score_col) from None
        if (item.id, connective) in seen:
            raise DatasetError(f"duplicate score for item {item.id} / {connective!r} (first on row "
                               f"{seen[(item.id, connective)]})", path=path, row=n, field=connective_col)
        seen[(item.id, connective)] = n
        scores.setdefault(item.id, {})[connective] = value
    records, incomplete = [], []
    for it in items:
        got = scores.get(it.id)
        if not got:
            continue
        if len(got) < len(data.CONNECTIVES):
            incomplete.append(it.id)
            continue
        label = data.best(got, lower_is_better=lower_is_better)
        records.append(ItemRecord(
            condition="imported", axes={"task": "imported"}, item_id=it.id, tags=dict(it.tags),
            fields=dict(it.fields), prompts=[], outputs=[], label=label,
            detail={"scores": got, "lower_is_better": lower_is_better}, gold=it.gold,
            correct=None if it.gold is None else label == it.gold))
    return ImportResult(records, unmatched, incomplete)


# -- command line -----------------------------------------------------------------------------

def _cli_apps() -> tuple[typer.Typer, typer.Typer]:
    from lingdiag.cli import CLI_APPS

    explica_app = typer.Typer(no_args_is_help=True, help="ExpliCa tools: prompt selection, built-in data.")
    CLI_APPS.register("explica")(explica_app)
    try:
        score_app = CLI_APPS.get("score")
    except UnknownNameError:
        score_app = typer.Typer(no_args_is_help=True, help="Score results computed elsewhere.")
        CLI_APPS.register("score")(score_app)
    return explica_app, score_app


explica_app, score_app = _cli_apps()


@score_app.command("explica")
def score_cmd(
    scores: Annotated[Path, typer.Option("--scores", help="CSV/TSV: Sentence_A, Sentence_B, connective, score.")],
    dataset: Annotated[str, typer.Option(help="official, builtin, or a path in the official layout.")] = "official",
    connective_col: Annotated[str, typer.Option(help="Column holding the connective.")] = "connective",
    score_col: Annotated[str, typer.Option(help="Column holding the score.")] = "score",
    lower_is_better: Annotated[bool, typer.Option("--lower-is-better",
                                                  help="Lowest score wins (perplexity).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics and unmatched rows as JSON.")] = False,
) -> None:
    """APS overall and per class from outside per-item scores, as a run would print it."""
    items = load(dataset).items
    result = import_scores(scores, items, connective_col=connective_col, score_col=score_col,
                           lower_is_better=lower_is_better)
    from lingdiag.run import summary

    m = {**metrics(result.records), **summary(result.records)} if result.records else {}
    if as_json:
        print(json.dumps({"metrics": m, "matched_items": len(result.records), "unmatched": result.unmatched,
                          "incomplete": result.incomplete}, indent=2, sort_keys=True))
        return
    if result.records:
        print(table([(scores.name, "imported", m)]))
    print(f"matched items: {len(result.records)} of {len(items)}", file=sys.stderr)
    if result.incomplete:
        print(f"left out, missing some connective: {len(result.incomplete)} items "
              f"({', '.join(result.incomplete[:10])}{' ...' if len(result.incomplete) > 10 else ''})", file=sys.stderr)
    if result.unmatched:
        print(f"unmatched rows: {len(result.unmatched)}", file=sys.stderr)
        for u in result.unmatched[:20]:
            print(f"  line {u['line']}: {u['reason']}: {u['Sentence_A']!r} / {u['Sentence_B']!r} / "
                  f"{u['connective']!r}", file=sys.stderr)
        if len(result.unmatched) > 20:
            print(f"  ... and {len(result.unmatched) - 20} more (see --json)", file=sys.stderr)


def prompt_perplexities(backend: Any, items: Sequence[Item], tasks: Sequence[str],
                        prompts_file: str | None = None) -> dict[str, dict[str, float]]:
    """Mean perplexity of each task's zero-shot prompt variants over ``items`` (Appendix E).

    Args:
        backend: A backend with log-likelihoods.
        items: Items whose sentences fill the prompts.
        tasks: Prompting tasks to rank.
        prompts_file: Optional user prompt file (``-o prompts=FILE``).

    Returns:
        ``{task: {variant: mean per-token perplexity of the filled prompt text}}``.
    """
    from lingdiag.run import dispatch

    out: dict[str, dict[str, float]] = {}
    for task in tasks:
        _, variants = load_prompts(prompts_file)[task]
        out[task] = {}
        for name in variants:
            strat = strategy(task, 0, "greedy", {"prompts": prompts_file, f"prompt_{task}": name, "format": "raw"})
            texts = []
            for k, it in enumerate(items):
                reqs = strat.render(it)
                # Rating has one prompt per connective: rotate through them over the items.
                texts.append(reqs[k % len(reqs)].prompt)
            lls = dispatch(backend, [LoglikelihoodRequest(context="", continuation=t) for t in texts])
            out[task][name] = sum(perplexity(r) for r in lls if isinstance(r, LogLikelihood)) / len(lls)
    return out


@explica_app.command("select-prompt")
def select_prompt_cmd(
    model: Annotated[list[str], typer.Option("--model", "-m", help="Model spec; repeat to average over models.")],
    limit: Annotated[int, typer.Option(help="Items whose sentences fill the prompts.")] = 20,
    task: Annotated[str, typer.Option(help="Tasks to rank (comma-separated).")] = ",".join(PROMPT_TASKS),
    prompts: Annotated[str | None, typer.Option(help="A YAML file with more variants (as -o prompts=FILE).")] = None,
    dataset: Annotated[str, typer.Option(help="builtin, official, or a path.")] = "builtin",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Rank prompt variants by mean perplexity over models (the paper's selection, §4)."""
    from lingdiag.models.cache import CachedBackend, ResponseCache
    from lingdiag.models.embedded import cache_dir
    from lingdiag.models.providers import load_backend
    from lingdiag.run import spread

    tasks = [t for t in task.split(",") if t]
    bad = [t for t in tasks if t not in PROMPT_TASKS]
    if bad:
        raise ConfigError(f"unknown task(s) {', '.join(bad)}; valid: {', '.join(PROMPT_TASKS)}")
    items = spread(load(dataset).items, limit)
    per_model = {}
    for spec in model:
        backend = CachedBackend(load_backend(spec), ResponseCache(cache_dir() / "responses.sqlite"))
        per_model[spec] = prompt_perplexities(backend, items, tasks, prompts)
    ranking = {t: sorted(((name, sum(per_model[m][t][name] for m in model) / len(model))
                          for name in per_model[model[0]][t]), key=lambda x: x[1]) for t in tasks}
    if as_json:
        print(json.dumps({"per_model": per_model, "ranking": ranking}, indent=2, sort_keys=True))
        return
    print(markdown_table(["Task", "Variant", *model, "Avg", "Selected"],
                         [[t, name, *[per_model[m][t][name] for m in model], avg, "✓" if k == 0 else ""]
                          for t in tasks for k, (name, avg) in enumerate(ranking[t])]))


@explica_app.command("write-builtin")
def write_builtin_cmd(out: Annotated[Path, typer.Argument(help="Where to write the CSV.")]) -> None:
    """Write the built-in pairs (illustrative ratings) in the official CSV layout."""
    n = data.write_builtin(out)
    print(f"wrote {n} rows to {out} (ratings are illustrative, not human judgements)", file=sys.stderr)
