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

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.analysis.compare import METHODS, paired
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.interpretable import degenerate_reason
from lingdiag.metrics.stats import percent
from lingdiag.prompts.loglik import LOGLIK, NORMALISATION, SCORING
from lingdiag.reading import records_of
from lingdiag.records import ItemRecord, ResultRow


@dataclass(frozen=True, slots=True)
class CompetenceJoin:
    """One prompted condition against its competence twin, on the same run's items.

    The core every competence join shares: ImperfectiveNLI's and CxNLI's label log-likelihood,
    and ExpliCa's perplexity, which extends it with its ρ column
    (:class:`lingdiag.suites.explica.analysis.CompetencePerformance`).
    """

    model: str
    condition: str
    """The prompted (generation) condition."""
    competence: str
    """The competence condition (log-likelihood or perplexity)."""
    normalisation: str
    """How label log-likelihoods were compared (``total`` or ``per-token``; empty for perplexity)."""
    n: int
    """Items with a gold label answered under both."""
    competence_acc: float
    prompted_acc: float
    both: int
    knows_not_says: int
    """Competence right, generated answer wrong or unparsed."""
    says_not_knows: int
    neither: int
    agreement: float
    """Share of the items where the generated label is the competence choice."""
    p: float
    """Exact McNemar, competence against prompted accuracy."""
    ci95: tuple[float, float]
    """Paired bootstrap interval of competence − prompted accuracy."""
    not_interpretable: str = ""
    """Why either side is not interpretable (:mod:`lingdiag.metrics.interpretable`); empty when both are."""

    def extra_columns(self) -> dict[str, str]:
        """Columns a suite's join adds to the shared table (header → cell); none here."""
        return {}


def answered(records: Sequence[ItemRecord]) -> dict[str, ItemRecord]:
    """Item id → record, for the records that were answered (no backend error) and have a gold label."""
    return {r.item_id: r for r in records if r.error is None and r.correct is not None}


def pair(model: str, condition: str, competence: str, competence_records: Mapping[str, ItemRecord],
         prompted_records: Mapping[str, ItemRecord], *, normalisation: str = "",
         seed: int = 0) -> CompetenceJoin | None:
    """The 2 × 2 join of one prompted condition and its competence twin on the items both answered.

    Args:
        model: The model's name.
        condition: The prompted condition.
        competence: The competence condition.
        competence_records: :func:`answered` of the competence condition.
        prompted_records: :func:`answered` of the prompted condition.
        normalisation: How competence compared labels, where it says.
        seed: Seeds the bootstrap.

    Returns:
        The join, or None when no item was answered under both.
    """
    shared = [i for i in competence_records if i in prompted_records]
    if not shared:
        return None
    comp, said = [competence_records[i] for i in shared], [prompted_records[i] for i in shared]
    test = paired(condition, comp, said, seed=seed)
    both = sum(bool(c.correct) and bool(s.correct) for c, s in zip(comp, said, strict=True))
    flags = [f"{side}: {why}" for side, records in (("prompted", prompted_records), ("loglik", competence_records))
             if (why := degenerate_reason(list(records.values()))) is not None]
    return CompetenceJoin(
        model, condition, competence, normalisation, len(shared), test.acc_a, test.acc_b, both, test.only_a,
        test.only_b, len(shared) - both - test.only_a - test.only_b,
        sum(s.label == c.label for c, s in zip(comp, said, strict=True)) / len(shared), test.p, test.ci95,
        "; ".join(flags))


def by_condition(records: Sequence[ItemRecord]) -> dict[str, list[ItemRecord]]:
    """Condition → its records, in record order."""
    out: dict[str, list[ItemRecord]] = {}
    for r in records:
        out.setdefault(r.condition, []).append(r)
    return out


def run_records(rows: Sequence[ResultRow], wanted: Callable[[Sequence[ResultRow]], bool]
                ) -> Iterator[tuple[str, list[ItemRecord]]]:
    """``(model, records)`` of every run among ``rows`` whose rows are ``wanted``, each read once;
    rows built in memory (no run directory) have no records to read and are left out.
    """
    for run in dict.fromkeys(r.run for r in rows if r.run):
        mine = [r for r in rows if r.run == run]
        if wanted(mine):  # otherwise no need to read the run's records
            yield mine[0].model, records_of(Path(run))


def _base(axes: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in axes.items() if k not in (SCORING, NORMALISATION)))


def join(model: str, records: Sequence[ItemRecord], *, seed: int = 0) -> list[CompetenceJoin]:
    """Every ``loglik`` condition of one run against its prompted twin (none without both)."""
    by = by_condition(records)
    prompted = {_base(rs[0].axes): c for c, rs in by.items() if rs[0].axes.get(SCORING, "generate") != LOGLIK}
    out = []
    for condition, rs in by.items():
        if rs[0].axes.get(SCORING) != LOGLIK or _base(rs[0].axes) not in prompted:
            continue
        twin = prompted[_base(rs[0].axes)]
        joined = pair(model, twin, condition, answered(rs), answered(by[twin]),
                      normalisation=str(rs[0].axes.get(NORMALISATION, "")), seed=seed)
        if joined is not None:
            out.append(joined)
    return out


def competence_performance(rows: Sequence[ResultRow], *, seed: int = 0) -> list[CompetenceJoin]:
    """The join for every run among ``rows`` that holds a ``loglik`` condition and its twin."""
    return [j for model, records in run_records(rows, lambda rs: any(r.axes.get(SCORING) == LOGLIK for r in rs))
            for j in join(model, records, seed=seed)]


def to_markdown(joined: Sequence[CompetenceJoin], title: str = "") -> str:
    """The competence-vs-performance table (the columns of ExpliCa's, log-likelihood for APS)."""
    header = ["Model", "Condition", "Normalisation", "n", "Loglik acc", "Prompted acc", "Both right",
              "Knows, not says", "Says, not knows", "Neither", "Same label", "Loglik − Prompted [95% CI]", "McNemar p"]
    extra = list(dict.fromkeys(k for j in joined for k in j.extra_columns()))
    header += extra
    rows = [[j.model, j.condition, j.normalisation, j.n, j.competence_acc, j.prompted_acc, j.both,
             f"{j.knows_not_says} ({percent(j.knows_not_says, j.n)})",
             f"{j.says_not_knows} ({percent(j.says_not_knows, j.n)})",
             j.neither, j.agreement, f"{j.competence_acc - j.prompted_acc:+.2f} [{j.ci95[0]:+.2f}, {j.ci95[1]:+.2f}]",
             f"{j.p:.3g}", *(j.extra_columns().get(k, "–") for k in extra)] for j in joined]
    flagged = [j for j in joined if j.not_interpretable]
    if flagged:  # the test is drawn, and marked beside it: it compares the parser or a constant answer
        header.append("Note")
        for row, j in zip(rows, joined, strict=True):
            row.append(f"not interpretable: {j.not_interpretable}" if j.not_interpretable else "")
    return (f"### {title + ': ' if title else ''}competence (label log-likelihood) vs performance (generated "
            "label), per item\n\n" + markdown_table(header, rows)
            + "\nCompetence: the label whose answer word is most likely as the first words of the answer to the "
              "same chat prompt (normalisation: total = summed log-prob of the word, lm-eval's acc; per-token = "
              f"its mean). Paired on the items both answered. p: {METHODS['p']}; interval: {METHODS['ci95']}, "
              "seed 0. Unparsed generated answers count as wrong."
            + (" A row marked not interpretable (at least half unparsed or failed, or one label for every item) "
               "compares the parser or a constant answer, not the model's knowledge." if flagged else "") + "\n")


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
