"""SyntaxGym (Hu et al. 2020): predictions over region surprisals, from the suite JSON as published.

``lingdiag run syntaxgym --dataset PATH|DIR|syntaxgym``. Each condition of an item is one
sentence (its regions joined by single spaces) scored token by token under the run's
scoring policy; a region's surprisal is the sum over its tokens (``lingdiag.prompts.regions``), and
the suite's formulas (``lingdiag.prompts.formulas``) decide whether the item passes. Accuracy is the
share of items where every prediction holds, per suite and per prediction.

Modules: ``files`` (the official suites and the loader), ``data`` (the suite JSON as published).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypedDict, cast

from lingdiag.analysis import sweep
from lingdiag.conditions import scoring_policy
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import Counts, accuracy, grouped, proportion_ci
from lingdiag.prompts.formulas import parse
from lingdiag.prompts.surprisal import LABELS, PREDICTIONS, predict, region_requests
from lingdiag.records import Item, ItemRecord, Prediction, Request, Response, ResultRow
from lingdiag.scoring import ScoringPolicy, policy
from lingdiag.suite import Condition, Dataset, Suite, register_suite
from lingdiag.suites.syntaxgym.files import FETCHED, load

ACC: Final = "accuracy"
ACC_CI: Final = "accuracy_ci95"
BY_SUITE: Final = "by_suite"
BY_PREDICTION: Final = "by_prediction"


class GymScores(TypedDict):
    """What :func:`metrics` computes for one condition."""

    accuracy: float
    """Share of items whose every prediction holds."""
    accuracy_ci95: list[float]
    """Wilson 95% interval."""
    by_suite: dict[str, float]
    by_prediction: dict[str, float]
    """``suite/index`` of a prediction in its file → the share of items where it holds."""
    outcomes: dict[str, str]
    """Per-item correctness for the policy sweep (``lingdiag.analysis.sweep.OUTCOMES``)."""


class GymMetrics(GymScores, Counts):
    """One condition's metrics as ``metrics.json`` and result rows hold them."""


def _metrics(row: ResultRow) -> GymMetrics:
    return cast(GymMetrics, row.metrics)


@dataclass(frozen=True)
class RegionScoring:
    """One per-token request per condition; region surprisals; the suite's predictions."""

    policy: ScoringPolicy

    def render(self, item: Item) -> list[Request]:
        """One request per condition, in the item's condition order."""
        return region_requests(item.fields["conditions"], self.policy)

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """``pass`` when every prediction holds; the region surprisals (bits) and each prediction's outcome."""
        return predict(item.fields["conditions"], item.fields["region_numbers"],
                       [parse(f) for f in item.fields["predictions"]], self.policy, responses)


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Any, seed: int) -> list[Condition]:
    """One condition per scoring policy, named by it."""
    return [Condition(p.name, {scoring_policy.AXIS: p.name}, RegionScoring(p), dataset.items)
            for p in scoring_policy.chosen(dict(axes))]


def _by_prediction(records: Sequence[ItemRecord]) -> dict[str, float]:
    hits: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        for k, ok in enumerate(r.detail.get(PREDICTIONS, [])):
            hits[f"{r.tags.get('suite')}/{k}"].append(bool(ok))
    return {key: sum(v) / len(v) for key, v in sorted(hits.items())}


def metrics(records: Sequence[ItemRecord]) -> GymScores:
    """Accuracy overall (Wilson interval), per suite, per prediction; per-item outcomes for the sweep."""
    return {ACC: accuracy(records), ACC_CI: proportion_ci(records, lambda r: bool(r.correct)),
            BY_SUITE: grouped(accuracy, "suite")(records), BY_PREDICTION: _by_prediction(records),
            "outcomes": sweep.outcomes(records)}


def table(rows: Sequence[ResultRow]) -> str:
    """Accuracy per condition, per suite and per prediction; the policy sweep."""
    policies = sorted({str(r.axes.get(scoring_policy.AXIS)) for r in rows})
    header = "\n".join("> " + policy(p).describe() for p in policies) + "\n\n"
    main = markdown_table(["Scoring policy", "Model", "Accuracy (↑)", "95% CI", "N"],
                          [[r.axes.get(scoring_policy.AXIS), r.model, _metrics(r)[ACC],
                            "[" + ", ".join(f"{x:.3f}" for x in _metrics(r)[ACC_CI]) + "]", _metrics(r).get("n")]
                           for r in rows])
    cols = [f"{r.model} {r.axes.get(scoring_policy.AXIS)}" for r in rows]
    suites = sorted({s for r in rows for s in _metrics(r)[BY_SUITE]})
    per_suite = markdown_table(["Suite", *cols], [[s, *(_metrics(r)[BY_SUITE].get(s) for r in rows)] for s in suites])
    preds = sorted({p for r in rows for p in _metrics(r)[BY_PREDICTION]})
    per_pred = markdown_table(["Prediction", *cols], [[p, *(_metrics(r)[BY_PREDICTION].get(p) for r in rows)]
                                                      for p in preds])
    return (header + main + "\n**Accuracy per suite**\n\n" + per_suite + "\n**Accuracy per prediction** "
            "(suite/index in its file)\n\n" + per_pred
            + ("\n" + sweep.section(rows, ACC, "accuracy") if len(policies) > 1 else ""))


SUITE = register_suite(Suite(
    name="syntaxgym",
    description="SyntaxGym suites (JSON as published): predictions over region surprisals, per suite",
    axes=(scoring_policy.axis(),),
    load=load,
    conditions=conditions,
    metrics=metrics,
    table=table,
    labels=LABELS,
    stat_tags=("suite",),
    default_dataset=FETCHED,
    headline=ACC,
    headline_label="Accuracy (↑): predictions met",
))
