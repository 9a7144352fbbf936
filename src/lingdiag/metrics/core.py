"""Metric building blocks: pure functions over scored records."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Final, TypedDict

from lingdiag.metrics.stats import BOOTSTRAP_SAMPLES
from lingdiag.records import UNFINISHED, UNPARSED, ItemRecord, TextOutput, thought

Metric = Callable[[Sequence[ItemRecord]], float]


def accuracy(records: Sequence[ItemRecord]) -> float:
    """Share of records with ``correct`` true; unparsed answers count as wrong."""
    scored = [r for r in records if r.correct is not None]
    return sum(bool(r.correct) for r in scored) / len(scored) if scored else math.nan


def rate(label: str) -> Metric:
    """Share of records predicted as ``label`` (e.g. the Teleological Bias Rate for "True")."""

    def share(records: Sequence[ItemRecord]) -> float:
        return sum(r.label == label for r in records) / len(records) if records else math.nan

    return share


def grouped(metric: Metric, by: str) -> Callable[[Sequence[ItemRecord]], dict[str, float]]:
    """``metric`` per value of tag ``by``."""

    def per_group(records: Sequence[ItemRecord]) -> dict[str, float]:
        groups: dict[str, list[ItemRecord]] = defaultdict(list)
        for r in records:
            groups[str(r.tags.get(by))].append(r)
        return {k: metric(v) for k, v in sorted(groups.items())}

    return per_group


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score 95% interval for a proportion (well-behaved at 0 and 1 and small n), unrounded:
    whoever shows it rounds it, once (0.65752 rounded to 4 places and then to 3 would print 0.657).
    """
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0 and n the bound is exactly the share; the float difference can miss it by 1e-17, and a
    # figure's error bar (share - bound) must not be negative.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def proportion_ci(records: Sequence[ItemRecord], hit: Callable[[ItemRecord], bool]) -> list[float]:
    """Wilson interval of the share of ``records`` for which ``hit`` holds."""
    return list(wilson(sum(hit(r) for r in records), len(records)))


WILSON = "Wilson score"
BOOTSTRAP = f"percentile bootstrap over items ({BOOTSTRAP_SAMPLES} resamples, seed 0)"
CI_METHODS: Final = "ci95_methods"
"""Metrics key: ``{interval key: method}`` for intervals that are not Wilson's (reports name the method)."""


N: Final = "n"
"""Items of the condition (every suite's metrics hold the :class:`Counts` keys)."""
N_UNPARSED: Final = "n_unparsed"
UNPARSED_RATE: Final = "unparsed_rate"
N_ERRORS: Final = "n_errors"
N_UNFINISHED: Final = "n_unfinished"
UNFINISHED_RATE: Final = "unfinished_rate"
REASONING_TOKENS: Final = "reasoning_tokens_mean"


class _Required(TypedDict):
    n: int
    n_unparsed: int
    """Answers that parsed to no label (backend errors not included)."""
    unparsed_rate: float
    n_errors: int
    """Items whose request failed at the backend."""


class Counts(_Required, total=False):
    """The counts every condition's metrics hold (:func:`summary`), by the keys above; the
    thinking counts only where a record of the condition thought (``total=False`` rather than
    ``NotRequired``, which postponed annotations hide from ``__optional_keys__`` at run time).
    """

    n_unfinished: int
    """Generations whose thinking never closed."""
    unfinished_rate: float
    reasoning_tokens_mean: float | None
    """Mean thinking tokens per item where the backend counted them."""


def summary(records: Sequence[ItemRecord]) -> Counts:
    """Counts every condition reports: items, unparsed answers and backend errors; where a record
    of the condition thought, also unfinished thinking (beside unparsed, never in it) and its length.
    """
    n = len(records)
    unparsed = sum(r.label == UNPARSED and r.error is None for r in records)
    errors = sum(r.error is not None for r in records)
    counts = Counts(n=n, n_unparsed=unparsed, unparsed_rate=unparsed / n if n else 0.0, n_errors=errors)
    if any(thought(o) for r in records for o in r.outputs):  # metrics of runs without thinking stay as they were
        unfinished = sum(r.label == UNFINISHED for r in records)
        lengths = [t for r in records if (t := reasoning_tokens(r)) is not None]
        counts["n_unfinished"] = unfinished
        counts["unfinished_rate"] = unfinished / n if n else 0.0
        counts["reasoning_tokens_mean"] = sum(lengths) / len(lengths) if lengths else None
    return counts


def reasoning_tokens(record: ItemRecord) -> int | None:
    """The thinking tokens of a record's generations, summed (None: none counted)."""
    counts = [o.reasoning_tokens for o in record.outputs
              if isinstance(o, TextOutput) and o.reasoning_tokens is not None]
    return sum(counts) if counts else None
