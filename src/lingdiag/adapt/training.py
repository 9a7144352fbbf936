"""The guarded training set of an adaptation: builder or file, split by lemma, audited."""

from __future__ import annotations

from dataclasses import dataclass

from lingdiag.adapt.data import BUILDERS, LemmaSplit, builder_items, split_lemmas
from lingdiag.adapt.guards import OverlapAudit, check_leakage, check_licence
from lingdiag.errors import ConfigError
from lingdiag.records import Item
from lingdiag.suite import SUITES

BUILDER = "builder"
"""``--train builder`` / ``--pairs builder``: the suite's own generator."""


@dataclass(frozen=True, slots=True)
class TrainingPlan:
    """How to build a training set: every choice that changes which items train."""

    suite: str
    train: str
    """``builder`` or a dataset the suite loads (a path, ``official``)."""
    eval_dataset: str = "official"
    """The dataset of the re-diagnosis (``--eval-dataset``)."""
    held_out: float = 0.5
    """Share of the evaluation lemmas kept out of training (``--held-out``; 1: share no lemma)."""
    lemma_field: str | None = None
    """The item tag holding the lemma (default: the builder's, else ``verb``)."""
    seed: int = 0


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """Training items that passed both guards, with their split and audit."""

    items: tuple[Item, ...]
    split: LemmaSplit
    audit: OverlapAudit
    dropped_shared: int
    """Builder items dropped for repeating an evaluation sentence (0 for a file)."""


def prepare(plan: TrainingPlan) -> TrainingSet:
    """Load, split and guard the training set of ``plan``.

    Raises:
        DatasetError: The training data's licence forbids training, or it leaks into the evaluation set.
    """
    suite = SUITES.get(plan.suite)
    check_licence(plan.suite, plan.train)
    if plan.train == BUILDER and plan.suite not in BUILDERS.names():
        raise ConfigError(f"suite {plan.suite!r} has no training builder; builders: {', '.join(BUILDERS.names())}; "
                          "give --train FILE instead")
    field = plan.lemma_field or (BUILDERS.get(plan.suite)().lemma if plan.suite in BUILDERS.names() else "verb")
    evaluation = list(suite.load(plan.eval_dataset).items)
    split = split_lemmas(evaluation, field, plan.held_out, plan.seed)
    if plan.train == BUILDER:
        items, dropped = builder_items(plan.suite, evaluation, split, plan.seed)
    else:
        items, dropped = list(suite.load(plan.train).items), 0
    result = check_leakage(items, evaluation, split, source=plan.train)
    return TrainingSet(tuple(items), split, result, dropped)
