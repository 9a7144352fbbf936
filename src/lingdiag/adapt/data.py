"""Training items from a suite's own builder, split by lemma against the evaluation set.

A lemma is the item tag that names the lexical material an item is built around (the
ImperfectiveNLI verb, the CxNLI construction). The evaluation set's lemmas are split once,
seeded: the held-out part must never reach training, so the re-diagnosis can tell the
items whose lemmas were trained from those whose lemmas were not.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import ConfigError, DatasetError
from lingdiag.io.atomic import write_atomic
from lingdiag.io.tabular import read_json
from lingdiag.records import Item
from lingdiag.registry import Registry


@dataclass(frozen=True, slots=True)
class Builder:
    """A suite's generator of training items and the tag its items' lemma sits in."""

    items: Callable[[int], list[Item]]
    """``seed → items`` (the suite's own generator, validated like its official data)."""
    lemma: str
    """The item tag holding the lemma (``verb``, ``construction``)."""
    biased: str | None = None
    """The answer the suite's bias favours, against which steering contrasts the gold
    (ImperfectiveNLI: ``True``, the teleological bias); None: no contrast-pair builder."""


def _imperfective() -> Builder:
    from lingdiag.suites.imperfective import data

    return Builder(data.builtin_items, "verb", biased="True")


def _cxnli() -> Builder:
    from lingdiag.suites.cxnli.files import load

    return Builder(lambda seed: list(load("builtin").items), "construction")


BUILDERS: Registry[Callable[[], Builder]] = Registry("training builder")
"""Suite name → lazy stub returning its builder."""
BUILDERS.register("imperfective")(_imperfective)
BUILDERS.register("cxnli")(_cxnli)


@dataclass(frozen=True, slots=True)
class LemmaSplit:
    """The evaluation set's lemmas, split into those training may use and those it may not."""

    field: str
    """The item tag holding the lemma."""
    trained: frozenset[str]
    held_out: frozenset[str]

    def side(self, tags: Mapping[str, Any], item_id: str) -> str:
        """``trained``, ``held-out`` or ``unseen`` (a lemma the evaluation set does not hold).

        Args:
            tags: An item's (or its record's) tags.
            item_id: Named in the error when the lemma tag is missing.
        """
        lemma = tag_lemma(tags, self.field, item_id)
        return "trained" if lemma in self.trained else "held-out" if lemma in self.held_out else "unseen"

    def as_json(self) -> dict[str, object]:
        """The split as ``split.json`` keeps it beside an adapter (sorted, so byte-stable)."""
        return {"field": self.field, "trained": sorted(self.trained), "held_out": sorted(self.held_out)}


def lemma_of(item: Item, field: str) -> str:
    """The lemma of ``item`` (its ``field`` tag), lower-cased; an item without it is an error."""
    return tag_lemma(item.tags, field, item.id)


def tag_lemma(tags: Mapping[str, Any], field: str, item_id: str) -> str:
    """The lemma in ``tags[field]``: NFKC, invisible marks and edge spaces dropped, case-folded
    (``"build "`` and ``"Build"`` are ``build``, so the leakage guard sees them); missing is an
    error naming ``item_id``.
    """
    value = tags.get(field)
    lemma = "".join(ch for ch in unicodedata.normalize("NFKC", value) if unicodedata.category(ch) != "Cf").strip() \
        if isinstance(value, str) else ""
    if not lemma:
        raise ConfigError(f"item {item_id!r} has no {field!r} tag to split lemmas by")
    return lemma.casefold()


SPLIT_FILE = "split.json"
"""A LoRA adapter directory's split; a steering file ``v.safetensors`` keeps its own as ``v.split.json``."""


def split_file(adapter: str) -> Path | None:
    """Where the lemma split of ``adapter`` (``lora:DIR``, ``steer:FILE@α``) is kept beside it."""
    kind, _, rest = adapter.partition(":")
    if kind == "lora":
        return Path(rest).expanduser() / SPLIT_FILE
    if kind == "steer" and "@" in rest:
        return Path(rest.rpartition("@")[0]).expanduser().with_suffix(".split.json")
    return None


def write_split(path: Path, split: LemmaSplit) -> None:
    """Record ``split`` at ``path`` (atomic; sorted, so the same split gives the same bytes)."""
    write_atomic(path, json.dumps(split.as_json(), indent=1) + "\n")


def read_split(path: Path) -> LemmaSplit:
    """A split file written by :func:`write_split`; a damaged one is a one-line error naming the field."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DatasetError("expected an object of field, trained and held_out", path=path)
    if not isinstance(data.get("field"), str) or not data["field"]:
        raise DatasetError("missing or empty (expected a string)", path=path, field="field")
    for key in ("trained", "held_out"):
        value = data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DatasetError("missing or not a list of strings", path=path, field=key)
    return LemmaSplit(data["field"], frozenset(data["trained"]), frozenset(data["held_out"]))


def split_lemmas(evaluation: Sequence[Item], field: str, held_out: float, seed: int) -> LemmaSplit:
    """Split the lemmas of ``evaluation``: a seeded ``held_out`` share is kept out of training.

    Args:
        evaluation: The items the adapted model will be re-diagnosed on.
        field: The item tag holding the lemma.
        held_out: Share of lemmas held out, in [0, 1] (1: training may share no lemma).
        seed: Chooses which lemmas; the same seed gives the same split.

    Returns:
        The split.
    """
    if not 0 <= held_out <= 1:
        raise ConfigError(f"--held-out {held_out}: a share between 0 and 1")
    lemmas = sorted({lemma_of(i, field) for i in evaluation})
    random.Random(seed).shuffle(lemmas)
    n = round(len(lemmas) * held_out)
    return LemmaSplit(field, frozenset(lemmas[n:]), frozenset(lemmas[:n]))


def guard_form(text: str) -> str:
    """``text`` as the sentence guard compares it: Unicode-compatibility folded (NBSP and other
    space variants become spaces), invisible format characters (zero-width spaces and joiners, soft
    hyphens) dropped, whitespace collapsed, case-folded, no space before punctuation and no final
    full stop, so that a training item differing from an evaluation item only by such marks is caught.
    """
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()).casefold())
    return text.rstrip(". ")


def sentences(item: Item) -> set[str]:
    """The item's texts in their ``guard_form``, as the sentence guard compares them."""
    return {form for v in item.fields.values() if isinstance(v, str) for form in [guard_form(v)] if form}


def builder_items(suite: str, evaluation: Sequence[Item], split: LemmaSplit, seed: int) -> tuple[list[Item], int]:
    """The suite builder's items that leak nothing into ``evaluation``.

    Items whose lemma is held out, or that repeat a sentence of the evaluation set, are
    dropped (the guard then audits what remains).

    Returns:
        The training items, and how many generated items were dropped for a shared sentence.
    """
    builder = BUILDERS.get(suite)()
    if builder.lemma != split.field:
        raise ConfigError(f"the {suite} builder tags lemmas as {builder.lemma!r}, not {split.field!r}")
    seen = set().union(*(sentences(i) for i in evaluation))
    kept, shared = [], 0
    for item in builder.items(seed):
        if lemma_of(item, split.field) in split.held_out:
            continue
        if sentences(item) & seen:
            shared += 1
            continue
        kept.append(item)
    return kept, shared
