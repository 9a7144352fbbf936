"""Competence against performance, joined per item, for label suites (issue 14).

A ``loglik`` condition (:mod:`lingdiag.prompts.loglik`) answers with the label whose answer
word is most likely after the very prompt a generation condition asks; its prompted twin is
the condition with the same axes minus ``scoring`` and ``normalisation``. On the items both
answered (with a gold label):

- the 2 × 2 table of right/wrong by log-likelihood against right/wrong when generated, with
  the exact McNemar test and a seeded paired-bootstrap interval of the difference
  (:func:`lingdiag.analysis.compare.paired`, as ExpliCa's §5.2 join);
- "knows but does not say": log-likelihood right, generated answer wrong or unparsed, and
  "says but does not know", the reverse;
- label agreement: the generated label is the log-likelihood choice.

Suites with such conditions (ImperfectiveNLI, CxNLI) show this table in their report's
analyses; ``lingdiag competence RUN`` prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.analysis.compare import METHODS, paired
from lingdiag.metrics.core import markdown_table
from lingdiag.prompts.loglik import LOGLIK, NORMALISATION, SCORING
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.store import RunStore


@dataclass(frozen=True, slots=True)
class CompetenceJoin:
    """One prompted condition against its log-likelihood twin, on the same run's items."""

    model: str
    condition: str
    """The prompted (generation) condition."""
    competence: str
    """The log-likelihood condition."""
    normalisation: str
    """How label log-likelihoods were compared (``total`` or ``per-token``)."""
    n: int
    """Items with a gold label answered under both."""
    competence_acc: float
    prompted_acc: float
    both: int
    knows_not_says: int
    """Log-likelihood right, generated answer wrong or unparsed."""
    says_not_knows: int
    neither: int
    agreement: float
    """Share of the items where the generated label is the log-likelihood choice."""
    p: float
    """Exact McNemar, competence against prompted accuracy."""
    ci95: tuple[float, float]
    """Paired bootstrap interval of competence − prompted accuracy."""


def _base(axes: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in axes.items() if k not in (SCORING, NORMALISATION)))


def join(model: str, records: Sequence[ItemRecord], *, seed: int = 0) -> list[CompetenceJoin]:
    """Every ``loglik`` condition of one run against its prompted twin (none without both)."""
    by: dict[str, list[ItemRecord]] = {}
    for r in records:
        by.setdefault(r.condition, []).append(r)
    prompted = {_base(rs[0].axes): c for c, rs in by.items() if rs[0].axes.get(SCORING, "generate") != LOGLIK}
    out = []
    for condition, rs in by.items():
        if rs[0].axes.get(SCORING) != LOGLIK or _base(rs[0].axes) not in prompted:
            continue
        twin = prompted[_base(rs[0].axes)]
        comp = {r.item_id: r for r in rs if r.error is None and r.correct is not None}
        said = {r.item_id: r for r in by[twin] if r.error is None and r.correct is not None}
        shared = [i for i in comp if i in said]
        if not shared:
            continue
        test = paired(twin, [comp[i] for i in shared], [said[i] for i in shared], seed=seed)
        both = sum(bool(comp[i].correct) and bool(said[i].correct) for i in shared)
        out.append(CompetenceJoin(
            model, twin, condition, str(rs[0].axes.get(NORMALISATION, "")), len(shared), test.acc_a, test.acc_b,
            both, test.only_a, test.only_b, len(shared) - both - test.only_a - test.only_b,
            sum(said[i].label == comp[i].label for i in shared) / len(shared), test.p, test.ci95))
    return out


def competence_performance(rows: Sequence[ResultRow], *, seed: int = 0) -> list[CompetenceJoin]:
    """The join for every run among ``rows`` that holds a ``loglik`` condition and its twin."""
    out = []
    for run in dict.fromkeys(r.run for r in rows if r.run):
        if not any(r.run == run and r.axes.get(SCORING) == LOGLIK for r in rows):
            continue  # no log-likelihood condition: no need to read the run's records
        model = next(r.model for r in rows if r.run == run)
        out += join(model, RunStore(Path(run)).load_records(), seed=seed)
    return out


def to_markdown(joined: Sequence[CompetenceJoin], title: str = "") -> str:
    """The competence-vs-performance table (the columns of ExpliCa's, log-likelihood for APS)."""
    header = ["Model", "Condition", "Normalisation", "n", "Loglik acc", "Prompted acc", "Both right",
              "Knows, not says", "Says, not knows", "Neither", "Same label", "Loglik − Prompted [95% CI]", "McNemar p"]
    rows = [[j.model, j.condition, j.normalisation, j.n, j.competence_acc, j.prompted_acc, j.both,
             f"{j.knows_not_says} ({j.knows_not_says / j.n:.0%})", f"{j.says_not_knows} ({j.says_not_knows / j.n:.0%})",
             j.neither, j.agreement, f"{j.competence_acc - j.prompted_acc:+.2f} [{j.ci95[0]:+.2f}, {j.ci95[1]:+.2f}]",
             f"{j.p:.3g}"] for j in joined]
    return (f"### {title + ': ' if title else ''}competence (label log-likelihood) vs performance (generated "
            "label), per item\n\n" + markdown_table(header, rows)
            + "\nCompetence: the label whose answer word is most likely as the first words of the answer to the "
              "same chat prompt (normalisation: total = summed log-prob of the word, lm-eval's acc; per-token = "
              f"its mean). Paired on the items both answered. p: {METHODS['p']}; interval: {METHODS['ci95']}, "
              "seed 0. Unparsed generated answers count as wrong.\n")


def report_section(title: str) -> Callable[[Sequence[ResultRow]], str]:
    """A suite's ``analyses`` section: the join of every run with a ``loglik`` condition.

    Args:
        title: The suite's name as the section heading shows it.

    Returns:
        ``rows → markdown``; empty where no run has a ``loglik`` condition.
    """
    def section(rows: Sequence[ResultRow]) -> str:
        joined = competence_performance(rows)
        return to_markdown(joined, title) if joined else ""

    return section
