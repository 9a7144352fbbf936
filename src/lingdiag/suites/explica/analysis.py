"""Competence against performance, joined per item (§5.2, Table 12).

The paper compares APS (competence: the connective whose sentence has the lowest perplexity)
with prompting accuracy (performance) as aggregates. With both on the same run the records
can be paired: for every prompting condition, on the pairs both sides answered,

- the 2 × 2 table of right/wrong under perplexity against right/wrong when prompted, with
  the exact McNemar test and a seeded paired-bootstrap interval of the difference
  (:func:`lingdiag.analysis.competence.pair`, the join ImperfectiveNLI and CxNLI share);
- "knows but does not say": perplexity right and the prompted answer wrong (or unparsed),
  and "says but does not know", the reverse, as shares of the paired items;
- label agreement: the prompted connective is the perplexity choice;
- for ratings, Table 12's Spearman ρ between each sentence's perplexity and the model's
  rating of the same sentence, over all pairs (unrelated ones too, as the paper's caption
  says); unreadable ratings (-1) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from lingdiag.analysis.compare import METHODS
from lingdiag.analysis.competence import CompetenceJoin, answered, by_condition, pair, run_records
from lingdiag.io.markdown import fmt, markdown_table
from lingdiag.metrics.correlation import SPEARMAN_BOOTSTRAP, spearman_ci
from lingdiag.metrics.stats import percent
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.suites.explica.metrics import spearman

PERPLEXITY = "perplexity"
RHO_HEADER = "ρ ppl~rating [95% CI] (n)"


@dataclass(frozen=True, slots=True)
class CompetencePerformance(CompetenceJoin):
    """One prompting condition against the same run's perplexity choices: the shared competence
    join (APS is its competence accuracy) with Table 12's ρ column.
    """

    rho_ratings: float | None = None
    """Spearman ρ of perplexity and rating per sentence (Table 12); None for cloze and MC, and
    when undefined (fewer than 3 sentences, or constant ratings)."""
    rho_n: int = 0
    rho_ci95: tuple[float, float] | None = None
    """Percentile bootstrap 95% interval of ``rho_ratings``, pairs resampled with their sentences."""

    def extra_columns(self) -> dict[str, str]:
        """Table 12's ρ of perplexity and rating, beside the shared columns."""
        return {RHO_HEADER: _rho(self)}

    @property
    def aps(self) -> float:
        """Accuracy of the perplexity choices (the paper's APS)."""
        return self.competence_acc

    @property
    def accuracy(self) -> float:
        """Prompting accuracy."""
        return self.prompted_acc


def _rating_rho(ppl: dict[str, ItemRecord],
                rated: dict[str, ItemRecord]) -> tuple[float | None, int, tuple[float, float] | None]:
    xs: list[float] = []
    ys: list[float] = []
    items: list[str] = []
    for item_id, r in rated.items():
        if item_id not in ppl or "ratings" not in r.detail or PERPLEXITY not in ppl[item_id].detail:
            continue
        for connective, rating in r.detail["ratings"].items():
            value = ppl[item_id].detail[PERPLEXITY].get(connective)
            if rating != -1 and value is not None and not math.isnan(float(value)):
                xs.append(float(value))
                ys.append(float(rating))
                items.append(item_id)
    rho = float(spearman(xs, ys)["rho"])
    if math.isnan(rho):
        return None, len(xs), None
    low, high = spearman_ci(xs, ys, items)
    return rho, len(xs), (low, high)


def _all_answered(records: Sequence[ItemRecord]) -> dict[str, ItemRecord]:
    # ρ reads every rated pair, unrelated ones (no gold label) too, as Table 12's caption says.
    return {r.item_id: r for r in records if r.error is None}


def join(model: str, records: Sequence[ItemRecord], *, seed: int = 0) -> list[CompetencePerformance]:
    """Every prompting condition of one run against its perplexity condition (none without one)."""
    by = by_condition(records)
    if PERPLEXITY not in by:
        return []
    out = []
    for condition, rs in by.items():
        if condition == PERPLEXITY:
            continue
        core = pair(model, condition, PERPLEXITY, answered(by[PERPLEXITY]), answered(rs), seed=seed)
        if core is None:
            continue
        rating = rs[0].axes.get("task") == "rating"
        rho, rho_n, rho_ci = (_rating_rho(_all_answered(by[PERPLEXITY]), _all_answered(rs)) if rating
                              else (None, 0, None))
        shared = {f.name: getattr(core, f.name) for f in fields(CompetenceJoin)}
        out.append(CompetencePerformance(**shared, rho_ratings=rho, rho_n=rho_n, rho_ci95=rho_ci))
    return out


def competence_performance(rows: Sequence[ResultRow], *, seed: int = 0) -> list[CompetencePerformance]:
    """The join for every run among ``rows`` that holds a perplexity condition."""
    return [j for model, records in run_records(rows, lambda rs: any(r.condition == PERPLEXITY for r in rs))
            for j in join(model, records, seed=seed)]


def to_markdown(joined: Sequence[CompetencePerformance]) -> str:
    """The competence-vs-performance table."""
    header = ["Model", "Condition", "n", "APS", "Acc", "Both right", "Knows, not says", "Says, not knows",
              "Neither", "Same label", "APS − Acc [95% CI]", "McNemar p", RHO_HEADER]
    rows = [[j.model, j.condition, j.n, j.aps, j.accuracy, j.both,
             f"{j.knows_not_says} ({percent(j.knows_not_says, j.n)})",
             f"{j.says_not_knows} ({percent(j.says_not_knows, j.n)})",
             j.neither, j.agreement, f"{j.aps - j.accuracy:+.2f} [{j.ci95[0]:+.2f}, {j.ci95[1]:+.2f}]",
             f"{j.p:.3g}", _rho(j)] for j in joined]
    return ("### ExpliCa: competence (perplexity) vs performance (prompting), per item (§5.2, Table 12)\n\n"
            + markdown_table(header, rows)
            + f"\nPaired on the causal/temporal pairs both answered. p: {METHODS['p']}; "
              f"interval: {METHODS['ci95']}, seed 0. Unparsed prompted answers count as wrong. "
              "ρ: Spearman of each sentence's perplexity with the model's rating of it, all pairs, "
              "unreadable ratings left out (a model whose two measures agree has ρ < 0); "
              f"its interval: {SPEARMAN_BOOTSTRAP}.\n")


def _rho(j: CompetencePerformance) -> str:
    if j.rho_ratings is None:
        return "–"
    ci = "" if j.rho_ci95 is None else f" [{fmt(j.rho_ci95[0])}, {fmt(j.rho_ci95[1])}]"
    return f"{fmt(j.rho_ratings)}{ci} ({j.rho_n})"


def report_section(rows: Sequence[ResultRow]) -> str:
    """The analyses section of a report: the join, when a run has perplexity and prompting."""
    joined = competence_performance(rows)
    if not joined:
        return ("### ExpliCa: competence vs performance\n\nNeeds a run with the perplexity task and a prompting "
                "task (e.g. --task rating,perplexity).\n")
    return to_markdown(joined)
