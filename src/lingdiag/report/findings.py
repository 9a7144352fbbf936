"""What a report says first: degenerate conditions, each suite's headline metric per model, and
the statistically supported differences between models and between competence and performance.

A condition is *degenerate* (not interpretable) by :mod:`lingdiag.metrics.interpretable`'s rule
(``lingdiag compare`` flags by the same): the report greys it out wherever it appears and keeps it
out of the findings.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from lingdiag.analysis.compare import Comparison, paired
from lingdiag.errors import ConfigError
from lingdiag.metrics.interpretable import degenerate_reason
from lingdiag.metrics.stats import holm_rows
from lingdiag.reading import LoadedRun
from lingdiag.records import ItemRecord

ALPHA = 0.05
"""Differences are reported when their Holm-adjusted p-value is below this."""


@dataclass(frozen=True, slots=True)
class Degenerate:
    """A condition of one model whose metrics are not interpretable, and why."""

    suite: str
    model: str
    """The model's name as the report's tables show it."""
    condition: str
    axes: Mapping[str, str]
    reason: str


def _by_condition(run: LoadedRun) -> dict[str, list[ItemRecord]]:
    out: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in run.records:
        out[r.condition].append(r)
    return out


def degenerate(runs: Sequence[LoadedRun]) -> list[Degenerate]:
    """Every degenerate condition of ``runs``, named as the tables name its model."""
    out = []
    for run in runs:
        for condition, records in _by_condition(run).items():
            reason = degenerate_reason(records)
            if reason is not None:
                out.append(Degenerate(run.suite_title, run.model, condition, dict(records[0].axes), reason))
    return out


@dataclass(frozen=True, slots=True)
class Finding:
    """One statistically supported difference, as one sentence."""

    suite: str
    sentence: str
    p: float


def _model_differences(suite: str, runs: Sequence[LoadedRun], skip: set[tuple[str, str]], seed: int) -> list[Finding]:
    tests: list[tuple[Comparison, str, str]] = []
    for a, b in combinations(runs, 2):
        na, nb = a.model, b.model
        ra, rb = _by_condition(a), _by_condition(b)
        for condition in ra.keys() & rb.keys():
            if (na, condition) in skip or (nb, condition) in skip:
                continue
            try:
                tests.append((paired(condition, ra[condition], rb[condition], seed=seed), na, nb))
            except ConfigError:
                continue  # no item with a gold label on both sides: nothing to test
    adjusted = holm_rows([t for t, _, _ in tests])
    out = []
    for c, (_, na, nb) in zip(adjusted, tests, strict=True):
        if c.p_holm < ALPHA:
            hi, lo, acc_hi, acc_lo = (na, nb, c.acc_a, c.acc_b) if c.diff > 0 else (nb, na, c.acc_b, c.acc_a)
            out.append(Finding(suite, f"{suite}, {c.condition}: {hi} is more accurate than {lo} "
                                      f"({acc_hi:.2f} vs {acc_lo:.2f} on {c.n} paired items; exact McNemar "
                                      f"p = {c.p:.3g}, Holm p = {c.p_holm:.3g}).", c.p_holm))
    return out


def _competence_differences(suite: str, runs: Sequence[LoadedRun], skip: set[tuple[str, str]],
                            seed: int) -> list[Finding]:
    join = runs[0].suite.competence
    if join is None:
        return []
    joins = [j for run in runs for j in join(run.model, run.records, seed=seed)
             if (j.model, j.condition) not in skip and (j.model, j.competence) not in skip]
    out = []
    for j in joins:
        if j.p < ALPHA:
            side = "knows more than it says" if j.competence_acc > j.prompted_acc else "says more than it knows"
            out.append(Finding(suite, f"{suite}, {j.model}: {side} on {j.condition} (log-likelihood accuracy "
                                      f"{j.competence_acc:.2f} vs prompted {j.prompted_acc:.2f} on {j.n} items; "
                                      f"exact McNemar p = {j.p:.3g}).", j.p))
    return out


def differences(runs: Sequence[LoadedRun], flagged: Sequence[Degenerate], *, seed: int = 0) -> list[Finding]:
    """Paired model-vs-model accuracy differences per condition (Holm over each suite's tests) and
    competence-vs-performance gaps, leaving out degenerate conditions.

    Raises:
        MissingDependency: statsmodels (the ``stats`` extra) is not installed.
    """
    skip = {(d.model, d.condition) for d in flagged}
    by_suite: dict[str, list[LoadedRun]] = defaultdict(list)
    for run in runs:
        by_suite[run.suite_title].append(run)
    out = []
    for suite, members in by_suite.items():
        out += _model_differences(suite, members, skip, seed)
        out += _competence_differences(suite, members, skip, seed)
    return out


def headline(runs: Sequence[LoadedRun], flagged: Sequence[Degenerate]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Suite → model → ``(condition, value)`` of the suite's headline metric (``Suite.headline``);
    a degenerate condition's value reads ``not interpretable``.
    """
    bad = {(d.suite, d.model, d.condition) for d in flagged}
    out: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for run in runs:
        key = run.suite.headline
        model = run.model
        cells = out.setdefault(run.suite_title, {}).setdefault(model, [])
        for row in run.rows:
            value = row.metrics.get(key) if key else None
            shown = ("not interpretable" if (run.suite_title, model, row.condition) in bad
                     else f"{value:.2f}" if isinstance(value, int | float) and math.isfinite(value) else "–")
            cells.append((row.condition, shown))
    return out

