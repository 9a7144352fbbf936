"""Analyses across the models of a study, from the runs' summaries (``lingdiag.reading.summary``: each
run's records as columns of codes, streamed once): accuracy with intervals per cell, items across
models, agreement between models, learning curves over checkpoints, and paired tests between the
models a researcher chose and between adjacent sizes and checkpoints.

A cell is one suite and condition of the study, held as a :class:`CellTable`: items × models, each
entry the model's outcome and label on the item. A record is right when ``correct`` is true; an
unparsed answer is wrong; a record with a backend error is left out (not graded) and counted.
Accuracy intervals are Wilson's.

Only measured runs have numbers (the report reads the runs ``lingdiag.rundir.state`` calls done); a
planned run that was not measured is a :class:`Missing`, and the curves and neighbour tests it
would sit in name it: no onset or stability is stated that a missing checkpoint could change, and two
models with an unmeasured one planned between them are tested as neighbours with that gap named.

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
              "is stable when it is present at every later one; a checkpoint not measured is neither, so an "
              "onset with one before it is only an upper bound and a stability with one after it is not known")
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


def run_accuracies(run: StudyRun) -> dict[str, Accuracy]:
    """Condition → ``run``'s accuracy on it, in the order its records first name them: what the report's
    accuracy table and learning curves print, counted once per study (``lingdiag.study.loaded.Study``).
    """
    c = run.summary.columns
    return {run.summary.vocab.conditions.names[code]: accuracy(c.outcome[c.of(code)])
            for code in dict.fromkeys(c.condition.tolist())}


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


def prevalence(table: CellTable, model: str, names: Sequence[str]) -> list[tuple[str, int]]:
    """``model``'s labels on the cell with how many of its answered items each takes, most frequent first
    (``names``: the label vocabulary); exact counts, whose shares a table prints by ``whole_percents``.
    """
    labels = table.label[:, table.column(model)]
    labels = labels[labels != NONE]
    if not len(labels):
        return []
    codes, counts = np.unique(labels, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return [(names[codes[k]], int(counts[k])) for k in order]


@dataclass(frozen=True, slots=True)
class Missing:
    """A run the study planned that was not measured (given up, failed, failed to load, not run, stale,
    unreadable): it is in no number of the report, and every curve and neighbour test it would sit in
    names it.
    """

    entry: RunEntry
    why: str
    """The run's state in one or two words (``gave up``, ``failed``, ``planned``, ``stale``...); the grid
    of runs gives its reason."""

    @property
    def label(self) -> str:
        """The model's name in the study."""
        return self.entry.model.label


def training_order(step: int | None, tokens: float | None) -> tuple[float, float]:
    """Where a checkpoint sits in training: by step, else by tokens (curves and neighbours alike)."""
    return (step if step is not None else math.inf, tokens or 0.0)


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One checkpoint of a model on one cell, measured or not."""

    model: str
    """The model the checkpoints belong to."""
    checkpoint: str
    step: int | None
    tokens: float | None
    accuracy: Accuracy
    chance: float
    missing: str | None = None
    """Why the checkpoint has no accuracy on this cell (not measured, the condition not run, nothing
    graded); None where it has one."""

    @property
    def present(self) -> bool:
        """Whether the effect is measured present here (``ONSET_RULE``)."""
        return self.missing is None and self.accuracy.ci95[0] > self.chance


def learning_curves(runs: Sequence[StudyRun], accuracies: Mapping[str, Mapping[str, Accuracy]],
                    missing: Sequence[Missing] = ()) -> dict[tuple[str, Cell], list[CurvePoint]]:
    """(model, cell) → every checkpoint planned for it, in training order (``training_order``): measured
    ones with their accuracy (``accuracies``: run key → :func:`run_accuracies`), the others with why not
    (``CurvePoint.missing``). A cell is a condition some checkpoint of the model measured on the suite.
    """
    conditions: dict[tuple[str, str], list[str]] = defaultdict(list)
    for s in runs:
        if s.entry.model.base is None:
            continue
        measured = accuracies[s.entry.key]
        place = (s.entry.model.base, s.entry.suite)
        conditions[place] += [name for name in measured if name not in conditions[place]]
    out: dict[tuple[str, Cell], list[CurvePoint]] = {}
    for (base, suite), names in conditions.items():
        mine = [s for s in runs if s.entry.model.base == base and s.entry.suite == suite]
        gone = [g for g in missing if g.entry.model.base == base and g.entry.suite == suite]
        for condition in names:
            points = []
            for s in mine:
                a = accuracies[s.entry.key].get(condition)
                why = "condition not run" if a is None else "no item graded" if a.n == 0 else None
                points.append(CurvePoint(base, s.label, s.entry.model.step, s.entry.model.tokens, a or Accuracy(0, 0),
                                         s.chance, why))
            points += [CurvePoint(base, g.label, g.entry.model.step, g.entry.model.tokens, Accuracy(0, 0),
                                  mine[0].chance, f"not measured ({g.why})") for g in gone]
            points.sort(key=lambda p: training_order(p.step, p.tokens))
            out[(base, (suite, condition))] = points
    return out


@dataclass(frozen=True, slots=True)
class Onset:
    """What a learning curve says of the effect (``ONSET_RULE``), and only what its missing points
    cannot change: an onset with an unmeasured checkpoint before it is an upper bound, a stability
    with one after it is unknown.
    """

    first: CurvePoint | None
    """The first measured checkpoint where the effect is present."""
    before: tuple[CurvePoint, ...]
    """Checkpoints before ``first`` (all of them, where it is None) without a measurement: the effect
    may appear there, earlier."""
    stable: bool | None
    """Present at every later checkpoint; False once a measured one lacks it; None where every later
    measured one has it but some later checkpoint was not measured."""
    after: tuple[CurvePoint, ...]
    """Checkpoints after ``first`` without a measurement."""


def onset(points: Sequence[CurvePoint]) -> Onset:
    """Where the effect first appears on a curve (see ``ONSET_RULE``) and whether it stays."""
    first = next((k for k, p in enumerate(points) if p.present), None)
    if first is None:
        return Onset(None, tuple(p for p in points if p.missing), None, ())
    later = points[first + 1:]
    after = tuple(p for p in later if p.missing)
    lost = any(p.missing is None and not p.present for p in later)
    return Onset(points[first], tuple(p for p in points[:first] if p.missing), False if lost else
                 (None if after else True), after)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two models to test against each other: A − B (see the module's text)."""

    kind: str
    """``chosen`` (a comparison of the study file), ``size`` or ``checkpoint``."""
    a: str
    b: str
    name: str = ""
    """The comparison's name (a chosen one's)."""
    suite: str | None = None
    """Only this suite's cells (neighbours are neighbours on one suite); None: every cell both ran."""
    between: tuple[str, ...] = ()
    """Models planned between ``a`` and ``b`` that were not measured (neighbours among the measured only)."""


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
    between: tuple[str, ...] = ()
    """Models planned between ``a`` and ``b`` that were not measured: the two are neighbours among the
    measured ones only."""


def pair_test(table: CellTable, a: str, b: str, *, seed: int = 0) -> Comparison:
    """A against B on the cell's items both graded (what ``lingdiag compare`` computes from the records)."""
    ia, ib = table.column(a), table.column(b)
    both = (table.outcome[:, ia] != NOT_GRADED) & (table.outcome[:, ib] != NOT_GRADED)
    return tested(table.cell[1], table.outcome[both, ia] == RIGHT, table.outcome[both, ib] == RIGHT, seed=seed)


def paired_tests(tables: Mapping[Cell, CellTable], pairs: Sequence[Pair], *,
                 seed: int = 0) -> tuple[list[Paired], list[str]]:
    """Each pair tested on every cell both models ran (of its suite, where it names one); the pairs' Holm
    (over the conditions of each pair of runs of a suite) and the table's; and what could not be tested,
    with why (a cell only one of the two ran among them).
    """
    found, skipped = [], []
    for p in pairs:
        for cell, table in tables.items():
            if p.suite is not None and cell[0] != p.suite:
                continue
            has_a, has_b = p.a in table.models, p.b in table.models
            if has_a != has_b:
                skipped.append(f"{cell[0]} {cell[1]}: {p.a} vs {p.b}: {p.b if has_a else p.a} has no records of "
                               "this condition")
            if not (has_a and has_b):
                continue
            try:
                found.append(Paired(cell, p.kind, p.a, p.b, pair_test(table, p.a, p.b, seed=seed), name=p.name,
                                    between=p.between))
            except LingdiagError as e:
                skipped.append(f"{cell[0]} {cell[1]}: {p.a} vs {p.b}: {e}")
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


def neighbours(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> tuple[list[Pair], list[str]]:
    """Neighbouring models per suite, in the order the study planned them (sizes within a family,
    checkpoints of a model), over the measured ones, with the planned ones between them that were not
    measured; and the planned models no test can reach (not measured), with why. The larger or later
    one is A, so that A − B is what growth or training changed.
    """
    planned = [(s.entry, None) for s in runs] + [(g.entry, g.why) for g in missing]
    groups: dict[tuple[str, str, str], list[tuple[tuple[float, float], str, str | None]]] = defaultdict(list)
    for entry, why in planned:
        m = entry.model
        if m.base is not None:
            groups[("checkpoint", entry.suite, m.base)].append((training_order(m.step, m.tokens), m.label, why))
        elif m.n_params is not None:
            groups[("size", entry.suite, m.family)].append(((m.n_params, 0.0), m.label, why))
    out, unreached = [], []
    for (kind, suite, _), members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        measured = [k for k, (_, _, why) in enumerate(members) if why is None]
        for i, j in zip(measured, measured[1:], strict=False):
            out.append(Pair(kind, members[j][1], members[i][1], suite=suite,
                            between=tuple(label for _, label, _ in members[i + 1:j])))
        unreached += [f"{suite}: {label}: not measured ({why})" for _, label, why in members if why is not None]
    return out, unreached


def adjacent(runs: Sequence[StudyRun], missing: Sequence[Missing], tables: Mapping[Cell, CellTable], *,
             seed: int = 0) -> tuple[list[Paired], list[str]]:
    """McNemar between neighbours (:func:`neighbours`) on every cell of their suite both measured (``tables``:
    :func:`cells` of the runs), with both Holm families; and what could not be tested, with why (planned
    models not measured among them).
    """
    pairs, unreached = neighbours(runs, missing)
    tests, skipped = paired_tests(tables, pairs, seed=seed)
    return tests, unreached + skipped
