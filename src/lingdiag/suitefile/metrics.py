"""A suite file's metrics: accuracies, label rates and prediction rates (the share of items whose
region surprisals satisfy a formula) over tag groups (Wilson intervals),
differences of two of them (bootstrap intervals, as Δ_AA), and correlations of the model's
numeric answers with a data column (Spearman ρ with the item bootstrap). Accuracies, rates and
their differences are count metrics, so ``lingdiag compare`` tests the ones declared ``paired``
from the same definitions.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lingdiag.metrics.core import BOOTSTRAP, CI_METHODS, grouped, proportion_ci
from lingdiag.metrics.correlation import SPEARMAN_BOOTSTRAP, spearman_ci
from lingdiag.metrics.counts import CountMetric, ratio, share
from lingdiag.metrics.stats import difference_ci, pearson, spearman
from lingdiag.prompts.formulas import parse
from lingdiag.prompts.surprisal import recorded_surprisals
from lingdiag.records import ItemRecord
from lingdiag.suitefile.schema import Accuracy, Correlation, MetricSpec, PredictionRate, Rate

Test = Callable[[ItemRecord], bool]


def _where(where: Mapping[str, str | list[str]]) -> Test:
    wanted = {tag: {v} if isinstance(v, str) else set(v) for tag, v in where.items()}
    return lambda r: all(str(r.tags.get(tag)) in values for tag, values in wanted.items())


@dataclass(frozen=True)
class Share:
    """An accuracy, a rate or a prediction rate: the share of the items ``within`` a subset for which ``hit`` holds."""

    within: Test
    hit: Test

    @classmethod
    def of(cls, spec: Accuracy | Rate | PredictionRate) -> Share:
        """The share a metric spec declares."""
        where = _where(spec.where)
        if isinstance(spec, Accuracy):
            return cls(lambda r: where(r) and r.correct is not None, lambda r: bool(r.correct))
        if isinstance(spec, PredictionRate):
            formula = parse(spec.formula)
            # Items without surprisals (unparsed, or another kind of condition) are outside the subset.
            return cls(lambda r: where(r) and recorded_surprisals(r.detail) is not None,
                       lambda r: formula(recorded_surprisals(r.detail) or {}))
        label = spec.label
        return cls(where, lambda r: r.label == label)

    def count(self) -> CountMetric:
        """The count metric (for the value and for paired permutation tests)."""
        return share(self.within, self.hit)

    def hits(self, records: Sequence[ItemRecord]) -> list[bool]:
        """``hit`` of every record within the subset."""
        return [self.hit(r) for r in records if self.within(r)]


def _float(value: Any) -> float | None:
    """``value`` as a finite number, or None (a label such as ``unparsed``, an empty cell)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _number(r: ItemRecord, source: str) -> float | None:
    x = _float(r.detail.get("rating") if source == "rating" else r.label)
    return None if x is None or (source == "rating" and x < 0) else x  # a rating of -1 was not read


def _column(r: ItemRecord, column: str) -> float | None:
    return _float(r.fields.get(column, r.tags.get(column)))


def correlation(spec: Correlation, records: Sequence[ItemRecord]) -> tuple[float, list[float] | None]:
    """The correlation over records with both numbers, and its interval (Spearman only)."""
    pairs = [(x, y, r.item_id) for r in records
             if (x := _number(r, spec.score)) is not None and (y := _column(r, spec.column)) is not None]
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    if spec.method == "pearson":
        r = pearson(xs, ys)
        return (math.nan if r is None else r.r), None
    rho = spearman(xs, ys)
    return (math.nan, [math.nan, math.nan]) if rho is None else (rho.r, spearman_ci(xs, ys, [p[2] for p in pairs]))


def group_intervals(s: Share, by: str, records: Sequence[ItemRecord]) -> dict[str, list[float] | None]:
    """The Wilson interval of share ``s`` per value of tag ``by`` (the keys of ``grouped``'s mapping)."""
    groups: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        groups[str(r.tags.get(by))].append(r)
    out: dict[str, list[float] | None] = {}
    for value, members in sorted(groups.items()):
        within = [r for r in members if s.within(r)]
        out[value] = proportion_ci(within, s.hit) if within else None
    return out


@dataclass(frozen=True)
class Metrics:
    """Every metric of a suite file, compiled (names already checked)."""

    specs: Mapping[str, MetricSpec]

    def share(self, name: str) -> Share:
        """The accuracy, rate or prediction rate called ``name``."""
        spec = self.specs[name].share
        assert spec is not None, name  # checked with the file
        return Share.of(spec)

    def count(self, name: str) -> CountMetric:
        """The count metric of an accuracy, rate or difference."""
        spec = self.specs[name]
        if spec.difference is None:
            return self.share(name).count()
        a, b = (self.count(n) for n in spec.difference)
        return CountMetric(lambda r: (*a.counts(r), *b.counts(r)),
                           lambda s: ratio(s[..., 0], s[..., 1]) - ratio(s[..., 2], s[..., 3]), 4)

    def paired(self) -> dict[str, CountMetric]:
        """The metrics ``lingdiag compare`` tests (``paired: true``)."""
        return {name: self.count(name) for name, spec in self.specs.items() if spec.paired}

    def __call__(self, records: Sequence[ItemRecord]) -> dict[str, Any]:
        """Every metric of one condition, with its interval under ``<name>_ci95``."""
        out: dict[str, Any] = {}
        methods: dict[str, str] = {}
        for name, spec in self.specs.items():
            subset = spec.share
            if subset is not None and subset.by is not None:
                s = self.share(name)
                out[name] = grouped(s.count(), subset.by)(records)
                out[f"{name}_ci95"] = group_intervals(s, subset.by, records)
            elif spec.correlation is not None:
                out[name], ci = correlation(spec.correlation, records)
                if ci is not None:
                    out[f"{name}_ci95"], methods[f"{name}_ci95"] = ci, SPEARMAN_BOOTSTRAP
            elif spec.difference is not None:
                out[name] = self.count(name)(records)
                a, b = (self.share(n).hits(records) for n in spec.difference)
                out[f"{name}_ci95"], methods[f"{name}_ci95"] = difference_ci(a, b), BOOTSTRAP
            else:
                s = self.share(name)
                out[name] = s.count()(records)
                within = [r for r in records if s.within(r)]
                out[f"{name}_ci95"] = proportion_ci(within, s.hit) if within else None
        if methods:
            out[CI_METHODS] = methods
        return out
