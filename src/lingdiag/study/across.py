"""Analyses across the models of a study, from the runs' summaries (``lingdiag.reading.summary``: each
run's records as columns of codes, streamed once): accuracy with intervals per cell, items across
models, agreement between models, learning curves over checkpoints, and paired tests between the
models a researcher chose and between adjacent sizes and checkpoints.

A cell is one suite and condition of the study, held as a :class:`CellTable`: items × models, each
entry the model's outcome and label on the item. A record is right when ``correct`` is true; an
unparsed answer is wrong; a record with a backend error is left out (not graded) and counted.
Accuracy intervals are Wilson's.

Paired tests follow one convention with ``lingdiag compare A B`` and the viewer's compare page: A is
the first model named, differences are A − B, exact McNemar on the items both graded, and each row
carries two Holm-adjusted p-values, each over a family the report names: the conditions of that pair
of runs (the family ``lingdiag compare`` corrects over, so its numbers are the same) and every row
of the table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from lingdiag.analysis.compare import Comparison, tested
from lingdiag.errors import LingdiagError
from lingdiag.metrics.core import wilson
from lingdiag.metrics.stats import holm
from lingdiag.reading import RunSummary
from lingdiag.reading.summary import NONE, NOT_GRADED, RIGHT
from lingdiag.rundir.study import RunEntry, StudyModel

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from lingdiag.reading import LoadedRun

Cell = tuple[str, str]
"""(suite in the study, condition)."""
ONSET_RULE = ("the effect is present at a checkpoint when the lower end of its accuracy's 95% Wilson interval "
              "is above chance (1 / the number of labels); it first appears at the first such checkpoint and "
              "is stable when it is present at every later one")
PAIR_FAMILY = "Holm over the conditions of that pair of runs (as `lingdiag compare A B` corrects)"
TABLE_FAMILY = "Holm over every row of this table"
DIRECTION = "A − B: A's accuracy minus B's, on the items both graded (as `lingdiag compare A B` prints it)"


@dataclass(frozen=True)
class StudyRun:
    """A run of the study read back (its summary), with the study's names for it."""

    entry: RunEntry
    summary: RunSummary
    chance: float
    """1 / the suite's labels (0.5 for minimal pairs)."""

    @property
    def label(self) -> str:
        """The model's name in the study."""
        return self.entry.model.label

    @property
    def run(self) -> LoadedRun:
        """The run as reports name it (rows, state; no records)."""
        return self.summary.run


def model_key(m: StudyModel) -> tuple[str, float, float, float]:
    """A model's place in the study's order: family, size, then training step (numerically: step500 before
    step1000; a model's own weights before its checkpoints), then tokens.
    """
    return (m.family, m.n_params if m.n_params is not None else math.inf,
            -1.0 if m.base is None else (m.step if m.step is not None else math.inf),
            m.tokens if m.tokens is not None else -1.0)


def model_order(runs: Sequence[StudyRun]) -> list[StudyRun]:
    """``runs`` in the study's order (:func:`model_key`), then as planned."""
    order = {id(s): k for k, s in enumerate(runs)}
    return sorted(runs, key=lambda s: (*model_key(s.entry.model), order[id(s)]))


@dataclass(frozen=True, slots=True)
class Accuracy:
    """Right answers of the graded ones."""

    right: int
    n: int

    @property
    def value(self) -> float:
        """The share right (NaN with nothing graded)."""
        return self.right / self.n if self.n else math.nan

    @property
    def ci95(self) -> tuple[float, float]:
        """Wilson's 95% interval."""
        return wilson(self.right, self.n)


def accuracy(outcome: NDArray[np.int8]) -> Accuracy:
    """The accuracy of records with these outcomes (an ungraded one left out)."""
    return Accuracy(int((outcome == RIGHT).sum()), int((outcome != NOT_GRADED).sum()))


@dataclass(frozen=True, eq=False)
class CellTable:
    """One cell across the models that ran it: items × models, in study order."""

    cell: Cell
    models: list[str]
    items: NDArray[np.int32]
    """Item codes (the summaries' shared vocabulary), in the order first seen."""
    outcome: NDArray[np.int8]
    """items × models: right, wrong or not graded (:data:`NOT_GRADED` also where a model has no record)."""
    label: NDArray[np.int32]
    """items × models: the label's code; :data:`NONE` where the backend failed or there is no record."""

    def column(self, model: str) -> int:
        """The column of ``model``."""
        return self.models.index(model)

    def accuracy(self, model: str) -> Accuracy:
        """``model``'s accuracy on this cell."""
        return accuracy(self.outcome[:, self.column(model)])


def cells(runs: Sequence[StudyRun]) -> dict[Cell, CellTable]:
    """Cell → its table, models in the order of ``runs``."""
    members: dict[Cell, list[tuple[str, NDArray[np.intp], RunSummary]]] = defaultdict(list)
    for s in runs:
        c = s.summary.columns
        for code in dict.fromkeys(c.condition.tolist()):
            cell = (s.entry.suite, s.summary.vocab.conditions.names[code])
            members[cell].append((s.label, c.of(code), s.summary))
    out = {}
    for cell, found in members.items():
        every = np.concatenate([summary.columns.item[lines] for _, lines, summary in found])
        codes, first = np.unique(every, return_index=True)  # sorted codes; where each is first seen
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))  # sorted code → its row (first-seen order)
        items = codes[order]
        outcome = np.full((len(items), len(found)), NOT_GRADED, np.int8)
        label = np.full((len(items), len(found)), NONE, np.int32)
        for j, (_, lines, summary) in enumerate(found):
            c = summary.columns
            position = rank[np.searchsorted(codes, c.item[lines])]
            outcome[position, j] = c.outcome[lines]
            label[position, j] = np.where(c.error[lines], NONE, c.label[lines])
        out[cell] = CellTable(cell, [m for m, _, _ in found], items.astype(np.int32), outcome, label)
    return out


@dataclass(frozen=True, slots=True)
class ItemShares:
    """Each item of a cell with how many models were right and graded on it."""

    right: NDArray[np.int64]
    graded: NDArray[np.int64]

    @property
    def share(self) -> NDArray[np.float64]:
        """The share of the graded models right (NaN where none graded it)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            share: NDArray[np.float64] = self.right / self.graded
        return share


def item_shares(table: CellTable) -> ItemShares:
    """Per item of ``table``: the models right, and the models graded."""
    return ItemShares((table.outcome == RIGHT).sum(axis=1), (table.outcome != NOT_GRADED).sum(axis=1))


@dataclass(frozen=True, slots=True)
class Split:
    """An item one group of models gets right (every member graded on it) and another gets wrong."""

    item: int
    """Its row in the cell's table."""
    by: str
    """``family`` or ``size``."""
    right: str
    wrong: str


def splits(table: CellTable, groups: Mapping[str, str], by: str) -> list[Split]:
    """Items that split the groups (model → group): all of one group's graded members right, all of another's
    wrong.
    """
    names = sorted(set(groups[m] for m in table.models))
    right = np.zeros((len(table.items), len(names)), bool)
    wrong = np.zeros((len(table.items), len(names)), bool)
    for g, name in enumerate(names):
        cols = [j for j, m in enumerate(table.models) if groups[m] == name]
        sub = table.outcome[:, cols]
        graded = (sub != NOT_GRADED).sum(axis=1)
        hits = (sub == RIGHT).sum(axis=1)
        right[:, g], wrong[:, g] = (graded > 0) & (hits == graded), (graded > 0) & (hits == 0)
    found = np.flatnonzero(right.any(axis=1) & wrong.any(axis=1))
    return [Split(int(k), by, ", ".join(n for g, n in enumerate(names) if right[k, g]),
                  ", ".join(n for g, n in enumerate(names) if wrong[k, g])) for k in found]


@dataclass(frozen=True, slots=True)
class Agreement:
    """Two models' labels on the items both answered without a backend error."""

    kappa: float | None
    """Cohen's kappa; None where chance agreement is total (one label on both sides)."""
    agree: int
    """Items given the same label."""
    n: int


def kappa(a: NDArray[np.int32], b: NDArray[np.int32]) -> float | None:
    """Cohen's kappa of two label-code sequences (None where chance agreement is total or empty)."""
    n = len(a)
    if n == 0:
        return None
    size = int(max(a.max(), b.max())) + 1
    observed = float((a == b).mean())
    expected = float((np.bincount(a, minlength=size) * np.bincount(b, minlength=size)).sum()) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def agreement(table: CellTable) -> dict[tuple[str, str], Agreement]:
    """Pairwise agreement on the labels (unparsed is a label) of the items both answered: (model, model) →
    :class:`Agreement`.
    """
    out = {}
    for i, a in enumerate(table.models):
        for j, b in enumerate(table.models):
            both = (table.label[:, i] != NONE) & (table.label[:, j] != NONE)
            la, lb = table.label[both, i], table.label[both, j]
            out[(a, b)] = Agreement(kappa(la, lb), int((la == lb).sum()), int(both.sum()))
    return out


def prevalence(table: CellTable, model: str, names: Sequence[str]) -> list[tuple[str, float]]:
    """``model``'s labels on the cell with the share of its answered items each takes, most frequent first
    (``names``: the label vocabulary).
    """
    labels = table.label[:, table.column(model)]
    labels = labels[labels != NONE]
    if not len(labels):
        return []
    codes, counts = np.unique(labels, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return [(names[codes[k]], float(counts[k] / len(labels))) for k in order]


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One checkpoint of a model on one cell."""

    model: str
    """The model the checkpoints belong to."""
    checkpoint: str
    step: int | None
    tokens: float | None
    accuracy: Accuracy
    chance: float

    @property
    def present(self) -> bool:
        """Whether the effect is present here (``ONSET_RULE``)."""
        return self.accuracy.n > 0 and self.accuracy.ci95[0] > self.chance


def learning_curves(runs: Sequence[StudyRun]) -> dict[tuple[str, Cell], list[CurvePoint]]:
    """(model, cell) → its checkpoints in training order (by step, else tokens)."""
    out: dict[tuple[str, Cell], list[CurvePoint]] = defaultdict(list)
    for s in runs:
        m = s.entry.model
        if m.base is None:
            continue
        c = s.summary.columns
        for code in dict.fromkeys(c.condition.tolist()):
            cell = (s.entry.suite, s.summary.vocab.conditions.names[code])
            out[(m.base, cell)].append(CurvePoint(m.base, s.label, m.step, m.tokens,
                                                  accuracy(c.outcome[c.of(code)]), s.chance))
    for points in out.values():
        points.sort(key=lambda p: (p.step if p.step is not None else math.inf, p.tokens or 0.0))
    return dict(out)


def onset(points: Sequence[CurvePoint]) -> tuple[CurvePoint | None, bool]:
    """Where the effect first appears (see ``ONSET_RULE``) and whether it stays."""
    first = next((k for k, p in enumerate(points) if p.present), None)
    if first is None:
        return None, False
    return points[first], all(p.present for p in points[first:])


@dataclass(frozen=True, slots=True)
class Paired:
    """A paired test of two models on one cell: A − B, with both Holm p-values (see the module's text)."""

    cell: Cell
    kind: str
    """``chosen`` (a comparison of the study file, by its name), ``size`` or ``checkpoint``."""
    a: str
    b: str
    test: Comparison
    """``test.p_holm``: Holm over the conditions of this pair of runs (``lingdiag compare``'s family)."""
    p_table: float = math.nan
    """Holm over every row of the table."""
    name: str = ""
    """The comparison's name (a chosen one's)."""


def pair_test(table: CellTable, a: str, b: str, *, seed: int = 0) -> Comparison:
    """A against B on the cell's items both graded (what ``lingdiag compare`` computes from the records)."""
    ia, ib = table.column(a), table.column(b)
    both = (table.outcome[:, ia] != NOT_GRADED) & (table.outcome[:, ib] != NOT_GRADED)
    return tested(table.cell[1], table.outcome[both, ia] == RIGHT, table.outcome[both, ib] == RIGHT, seed=seed)


def paired_tests(tables: Mapping[Cell, CellTable], pairs: Sequence[tuple[str, str, str, str]], *,
                 seed: int = 0) -> tuple[list[Paired], list[str]]:
    """Each pair ``(kind, name, A, B)`` tested on every cell both models ran; the pairs' Holm (over the
    conditions of each pair of runs of a suite) and the table's; and what could not be tested, with why.
    """
    found, skipped = [], []
    for kind, name, a, b in pairs:
        for cell, table in tables.items():
            if a in table.models and b in table.models:
                try:
                    found.append(Paired(cell, kind, a, b, pair_test(table, a, b, seed=seed), name=name))
                except LingdiagError as e:
                    skipped.append(f"{cell[0]} {cell[1]}: {a} vs {b}: {e}")
    families: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    for k, t in enumerate(found):
        families[(t.name, t.cell[0], t.a, t.b)].append(k)
    by_pair = [math.nan] * len(found)
    for members in families.values():
        for k, q in zip(members, holm([found[k].test.p for k in members]), strict=True):
            by_pair[k] = q
    table_wide = holm(t.test.p for t in found)
    return [replace(t, test=replace(t.test, p_holm=q), p_table=w)
            for t, q, w in zip(found, by_pair, table_wide, strict=True)], skipped


def neighbours(runs: Sequence[StudyRun]) -> list[tuple[str, str, str]]:
    """(kind, larger/later, smaller/earlier) of neighbouring models: sizes within a family, checkpoints of a
    model. The larger or later one is A, so that A − B is what growth or training changed.
    """
    out = []
    sized: dict[str, dict[str, float]] = defaultdict(dict)
    steps: dict[str, dict[str, float]] = defaultdict(dict)
    for s in runs:
        m = s.entry.model
        if m.base is not None:
            steps[m.base][m.label] = m.step if m.step is not None else (m.tokens or 0.0)
        elif m.n_params is not None:
            sized[m.family][m.label] = m.n_params
    for kind, groups in (("size", sized), ("checkpoint", steps)):
        for members in groups.values():
            ordered = sorted(members, key=lambda k: members[k])
            out += [(kind, b, a) for a, b in zip(ordered, ordered[1:], strict=False)]
    return out


def adjacent(runs: Sequence[StudyRun], tables: Mapping[Cell, CellTable] | None = None, *,
             seed: int = 0) -> tuple[list[Paired], list[str]]:
    """McNemar between neighbours (:func:`neighbours`) on every cell both ran, with both Holm families."""
    return paired_tests(tables if tables is not None else cells(runs),
                        [(kind, "", a, b) for kind, a, b in neighbours(runs)], seed=seed)
