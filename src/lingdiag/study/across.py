"""Analyses across the models of a study, from their records only: accuracy with intervals per
cell, items across models, agreement between models, learning curves over checkpoints and
paired tests between adjacent sizes and checkpoints.

A cell is one suite and condition of the study. A record is right when ``correct`` is true; an
unparsed answer is wrong; a record with a backend error (``correct`` None) is left out and
counted. Accuracy intervals are Wilson's.
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
              "is stable when it is present at every later one")


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
        by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
        for r in s.run.records:
            by_condition[r.condition].append(r)
        for condition, records in by_condition.items():
            out[(m.base, (s.entry.suite, condition))].append(
                CurvePoint(m.base, s.label, m.step, m.tokens, accuracy(records), s.chance))
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
class Adjacent:
    """A paired test of two neighbouring models (sizes of a family, or checkpoints)."""

    cell: Cell
    kind: str
    """``size`` or ``checkpoint``."""
    a: str
    b: str
    test: Comparison


def neighbours(runs: Sequence[StudyRun]) -> list[tuple[str, str, str]]:
    """(kind, smaller/earlier, larger/later) of neighbouring models: sizes within a family, checkpoints of a model."""
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
            out += [(kind, a, b) for a, b in zip(ordered, ordered[1:], strict=False)]
    return out


def adjacent(runs: Sequence[StudyRun], *, seed: int = 0) -> tuple[list[Adjacent], list[str]]:
    """McNemar between neighbours on every cell both ran, Holm over all of them; and the pairs
    that could not be tested, with why.
    """
    table = cells(runs)
    tests, skipped = [], []
    for kind, a, b in neighbours(runs):
        for cell, models in table.items():
            if a in models and b in models:
                try:
                    tests.append(Adjacent(cell, kind, a, b, paired(f"{a} vs {b}", models[a], models[b], seed=seed)))
                except LingdiagError as e:
                    skipped.append(f"{cell[0]} {cell[1]}: {a} vs {b}: {e}")
    adjusted = holm(t.test.p for t in tests)
    return [replace(t, test=replace(t.test, p_holm=q)) for t, q in zip(tests, adjusted, strict=True)], skipped
