"""Another harness's answers (lm-eval, inspect) as lingdiag runs: one condition per task, the
task's own choices as its labels.

An imported record keeps the harness's item as it was logged: ``item_id`` the harness's id
(lm-eval's ``doc_id``, inspect's sample id), ``fields`` the doc or input, prompt, choices and target,
``outputs`` the per-choice log-likelihoods (``loglikelihood``/``multiple_choice``) or the raw
generation, ``label`` lingdiag's reading of them (the likeliest choice, or the answer reader's label)
and ``detail["harness"]`` the harness's own answer and metrics, kept beside it. The suite cannot
run: its items exist only in the logs they were imported from (``lingdiag import``, ``lingdiag.interop``).

Metrics per task: lingdiag's accuracy (Wilson interval) and the harness's, read from the same
records, with the items on which the two disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from lingdiag.errors import ConfigError, DatasetError
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import Counts, accuracy, proportion_ci
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.suite import Axis, Condition, Dataset, Suite, register_suite

NAME: Final = "harness"
HARNESS: Final = "harness"
"""The key of ``ItemRecord.detail`` holding the harness's own reading (:class:`HarnessReading` as JSON)."""
ACC: Final = "accuracy"
ACC_CI: Final = "accuracy_ci95"
HARNESS_ACC: Final = "harness_accuracy"
DISAGREE: Final = "n_disagree"


class HarnessMetrics(Counts):
    """One task's metrics."""

    accuracy: float
    """lingdiag's reading: the likeliest choice, or the answer reader's label, against the target."""
    accuracy_ci95: list[float]
    harness_accuracy: float
    """The share of items the harness itself scored right (its ``acc``, ``exact_match``, scorer value)."""
    n_disagree: int
    """Items whose answer lingdiag and the harness read differently."""


def harness_correct(r: ItemRecord) -> bool | None:
    """Whether the harness scored ``r`` right (None where it recorded no verdict)."""
    value = dict(r.detail.get(HARNESS) or {}).get("correct")
    return None if value is None else bool(value)


def disagrees(r: ItemRecord) -> bool:
    """Whether lingdiag's answer to ``r`` differs from the harness's."""
    return dict(r.detail.get(HARNESS) or {}).get("answer") != r.label


def _metrics(records: Sequence[ItemRecord]) -> HarnessMetrics:
    verdicts = [v for v in map(harness_correct, records) if v is not None]
    return {  # type: ignore[typeddict-item]  # the counts are added by Suite.condition_metrics
        ACC: accuracy(records), ACC_CI: proportion_ci(records, lambda r: bool(r.correct)),
        HARNESS_ACC: sum(verdicts) / len(verdicts) if verdicts else math.nan,
        DISAGREE: sum(map(disagrees, records)),
    }


def _cell(x: Any) -> str:
    return "–" if not isinstance(x, int | float) or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _table(rows: Sequence[ResultRow]) -> str:
    return markdown_table(
        ["Model", "Task", "N", "Accuracy (lingdiag)", "Accuracy (harness)", "Answers read differently"],
        [[r.model, r.condition, r.metrics.get("n", ""), _cell(r.metrics.get(ACC)), _cell(r.metrics.get(HARNESS_ACC)),
          r.metrics.get(DISAGREE, "")] for r in rows])


def _load(spec: str) -> Dataset:
    raise DatasetError("a harness run's items exist only in the log it was imported from; "
                       "bring it in with lingdiag import lm-eval|inspect", path=spec)


def _conditions(dataset: Dataset, selection: Mapping[str, Sequence[str]], options: Any, seed: int) -> list[Condition]:
    raise ConfigError("the harness suite holds imported runs and cannot run; use lingdiag import lm-eval|inspect")


SUITE = register_suite(Suite(
    name=NAME,
    description="Another harness's logged answers (lm-eval, inspect), imported: one condition per task.",
    axes=(Axis("task", (), (), "the harness's task (set on import)"),),
    load=_load,
    conditions=_conditions,
    metrics=_metrics,
    table=_table,
    headline=ACC,
    headline_label="Accuracy",
    default_dataset="imported",
))
