"""Analyses across the models of a study, from their records only: accuracy with intervals per
cell, items across models, agreement between models, learning curves over checkpoints and
paired tests between adjacent sizes and checkpoints.

A cell is one suite and condition of the study. A record is right when ``correct`` is true; an
unparsed answer is wrong; a record with a backend error (``correct`` None) is left out and
counted. Accuracy intervals are Wilson's.

Only measured runs have numbers (the report reads the runs ``lingdiag.rundir.state`` calls done); a
planned run that was not measured is a :class:`Missing`, and the curves and neighbour tests it
would sit in name it: no onset or stability is stated that a missing checkpoint could change, and two
models with an unmeasured one planned between them are tested as neighbours with that gap named.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from lingdiag.analysis.compare import Comparison, paired
from lingdiag.errors import LingdiagError
from lingdiag.metrics.core import wilson
from lingdiag.metrics.stats import holm
from lingdiag.reading import LoadedRun
from lingdiag.records import ItemRecord
from lingdiag.rundir.study import RunEntry

Cell = tuple[str, str]
"""(suite in the study, condition)."""
ONSET_RULE = ("the effect is present at a checkpoint when the lower end of its accuracy's 95% Wilson interval "
              "is above chance (1 / the number of labels); it first appears at the first such checkpoint and "
              "is stable when it is present at every later one; a checkpoint not measured is neither, so an "
              "onset with one before it is only an upper bound and a stability with one after it is not known")


@dataclass(frozen=True)
class StudyRun:
    """A run of the study read back, with the study's names for it."""

    entry: RunEntry
    run: LoadedRun
    chance: float
    """1 / the suite's labels (0.5 for minimal pairs)."""

    @property
    def label(self) -> str:
        """The model's name in the study."""
        return self.entry.model.label


def graded(records: Sequence[ItemRecord]) -> list[ItemRecord]:
    """The records with a gold label and no backend error (an unparsed answer is graded wrong)."""
    return [r for r in records if r.correct is not None and r.error is None]


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


def accuracy(records: Sequence[ItemRecord]) -> Accuracy:
    """The accuracy of ``records`` (see :func:`graded`)."""
    rated = graded(records)
    return Accuracy(sum(bool(r.correct) for r in rated), len(rated))


def cells(runs: Sequence[StudyRun]) -> dict[Cell, dict[str, list[ItemRecord]]]:
    """Cell → model → its records, models in study order."""
    out: dict[Cell, dict[str, list[ItemRecord]]] = defaultdict(dict)
    for s in runs:
        by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
        for r in s.run.records:
            by_condition[r.condition].append(r)
        for condition, records in by_condition.items():
            out[(s.entry.suite, condition)][s.label] = records
    return dict(out)


@dataclass(frozen=True, slots=True)
class ItemShare:
    """One item of a cell across the models that were graded on it."""

    item_id: str
    right: tuple[str, ...]
    wrong: tuple[str, ...]

    @property
    def share(self) -> float:
        """The share of the graded models that are right."""
        return len(self.right) / (len(self.right) + len(self.wrong))


def item_shares(models: Mapping[str, Sequence[ItemRecord]]) -> list[ItemShare]:
    """Each item with the models right and wrong on it, in the first model's item order."""
    right: dict[str, list[str]] = defaultdict(list)
    wrong: dict[str, list[str]] = defaultdict(list)
    for model, records in models.items():
        for r in graded(records):
            (right if r.correct else wrong)[r.item_id].append(model)
    order = dict.fromkeys(r.item_id for records in models.values() for r in graded(records))
    return [ItemShare(i, tuple(right[i]), tuple(wrong[i])) for i in order]


@dataclass(frozen=True, slots=True)
class Split:
    """An item one group of models gets right (every member) and another gets wrong (every member)."""

    item_id: str
    by: str
    """``family`` or ``size``."""
    right: str
    wrong: str


def splits(shares: Sequence[ItemShare], groups: Mapping[str, str], by: str) -> list[Split]:
    """Items that split the groups (model → group): all of one group right, all of another wrong."""
    out = []
    for s in shares:
        members: dict[str, list[bool]] = defaultdict(list)
        for m in s.right:
            members[groups[m]].append(True)
        for m in s.wrong:
            members[groups[m]].append(False)
        all_right = sorted(g for g, v in members.items() if all(v))
        all_wrong = sorted(g for g, v in members.items() if not any(v))
        if all_right and all_wrong:
            out.append(Split(s.item_id, by, ", ".join(all_right), ", ".join(all_wrong)))
    return out


def kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two label sequences (None where chance agreement is total)."""
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def agreement(models: Mapping[str, Sequence[ItemRecord]]) -> dict[tuple[str, str], tuple[float | None, int]]:
    """Pairwise Cohen's kappa on the labels (unparsed is a label) over the items both answered
    without an error: (model, model) → (kappa, items).
    """
    labels = {m: {r.item_id: r.label for r in rs if r.error is None} for m, rs in models.items()}
    out = {}
    for a in labels:
        for b in labels:
            shared = [i for i in labels[a] if i in labels[b]]
            out[(a, b)] = (kappa([labels[a][i] for i in shared], [labels[b][i] for i in shared]), len(shared))
    return out


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


def _point(s: StudyRun, condition: str, records: Sequence[ItemRecord] | None) -> CurvePoint:
    m = s.entry.model
    assert m.base is not None
    a = accuracy(records or ())
    missing = "condition not run" if records is None else "no item graded" if a.n == 0 else None
    return CurvePoint(m.base, s.label, m.step, m.tokens, a, s.chance, missing)


def learning_curves(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> dict[tuple[str, Cell],
                                                                                       list[CurvePoint]]:
    """(model, cell) → every checkpoint planned for it, in training order (``training_order``): measured
    ones with their accuracy, the others with why not (``CurvePoint.missing``). A cell is a condition
    some checkpoint of the model measured on the suite.
    """
    by_run: dict[str, dict[str, list[ItemRecord]]] = {}
    conditions: dict[tuple[str, str], list[str]] = defaultdict(list)
    for s in runs:
        if s.entry.model.base is None:
            continue
        by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
        for r in s.run.records:
            by_condition[r.condition].append(r)
        by_run[s.entry.key] = by_condition
        place = (s.entry.model.base, s.entry.suite)
        conditions[place] += [c for c in by_condition if c not in conditions[place]]
    out: dict[tuple[str, Cell], list[CurvePoint]] = {}
    for (base, suite), names in conditions.items():
        mine = [s for s in runs if s.entry.model.base == base and s.entry.suite == suite]
        gone = [g for g in missing if g.entry.model.base == base and g.entry.suite == suite]
        for condition in names:
            points = [_point(s, condition, by_run[s.entry.key].get(condition)) for s in mine]
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
class Adjacent:
    """A paired test of two neighbouring models (sizes of a family, or checkpoints)."""

    cell: Cell
    kind: str
    """``size`` or ``checkpoint``."""
    a: str
    b: str
    test: Comparison
    between: tuple[str, ...] = ()
    """Models planned between ``a`` and ``b`` that were not measured: the two are neighbours among the
    measured ones only."""


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Two models measured on a suite with no measured model of their group between them."""

    kind: str
    suite: str
    a: str
    b: str
    between: tuple[str, ...]
    """Planned between them, not measured."""


def neighbours(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> tuple[list[Neighbours], list[str]]:
    """Neighbouring models per suite, in the order the study planned them (sizes within a family,
    checkpoints of a model), over the measured ones, with the planned ones between them that were
    not measured; and the planned models no test can reach (not measured), with why.
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
            out.append(Neighbours(kind, suite, members[i][1], members[j][1],
                                  tuple(label for _, label, _ in members[i + 1:j])))
        unreached += [f"{suite}: {label}: not measured ({why})" for _, label, why in members if why is not None]
    return out, unreached


def adjacent(runs: Sequence[StudyRun], missing: Sequence[Missing] = (), *, seed: int = 0) -> tuple[list[Adjacent],
                                                                                                    list[str]]:
    """McNemar between neighbours (:func:`neighbours`) on every condition both measured, Holm over all of
    them; and what could not be tested, with why (planned models not measured among them).
    """
    table = cells(runs)
    pairs, skipped = neighbours(runs, missing)
    tests = []
    for n in pairs:
        for cell, models in table.items():
            if cell[0] != n.suite or (n.a not in models and n.b not in models):
                continue
            if n.a not in models or n.b not in models:
                skipped.append(f"{cell[0]} {cell[1]}: {n.a} vs {n.b}: {n.b if n.a in models else n.a} has no "
                               "records of this condition")
                continue
            try:
                tests.append(Adjacent(cell, n.kind, n.a, n.b, paired(f"{n.a} vs {n.b}", models[n.a], models[n.b],
                                                                      seed=seed), n.between))
            except LingdiagError as e:
                skipped.append(f"{cell[0]} {cell[1]}: {n.a} vs {n.b}: {e}")
    adjusted = holm(t.test.p for t in tests)
    return [replace(t, test=replace(t.test, p_holm=q)) for t, q in zip(tests, adjusted, strict=True)], skipped
