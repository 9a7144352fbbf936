"""Training items from a suite's own builder, split by lemma against the evaluation set.

A lemma is the item tag that names the lexical material an item is built around (the
ImperfectiveNLI verb, the CxNLI construction). The evaluation set's lemmas are split once,
seeded: the held-out part must never reach training, so the re-diagnosis can tell the
items whose lemmas were trained from those whose lemmas were not.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lingdiag.errors import ConfigError
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

    def side(self, item: Item) -> str:
        """``trained``, ``held-out`` or ``unseen`` (a lemma the evaluation set does not hold)."""
        lemma = lemma_of(item, self.field)
        return "trained" if lemma in self.trained else "held-out" if lemma in self.held_out else "unseen"

    def as_json(self) -> dict[str, object]:
        """The split as ``split.json`` keeps it beside an adapter (sorted, so byte-stable)."""
        return {"field": self.field, "trained": sorted(self.trained), "held_out": sorted(self.held_out)}


def lemma_of(item: Item, field: str) -> str:
    """The lemma of ``item`` (its ``field`` tag), lower-cased; an item without it is an error."""
    value = item.tags.get(field)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"item {item.id!r} has no {field!r} tag to split lemmas by")
    return value.lower()


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


def sentences(item: Item) -> set[str]:
    """The item's texts, whitespace-normalised and case-folded, as the sentence guard compares them."""
    return {" ".join(v.split()).casefold() for v in item.fields.values() if isinstance(v, str) and v.strip()}


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
