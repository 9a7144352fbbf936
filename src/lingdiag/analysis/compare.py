"""Is a difference a finding? Paired tests of two runs (or two conditions of one run) on the same
items, from their records alone.

For each pair of conditions: the exact McNemar test on the discordant items (statsmodels), a
paired bootstrap 95% interval of the accuracy difference (items resampled with a seeded
generator, so the interval repeats), and Holm's correction over all the pairs of the table.
Items count where both sides have a gold label; an unparsed answer is wrong on its side.

A second table tests the suite's rates and gaps (``Suite.paired_metrics``: ImperfectiveNLI's
TBR_C and Δ_AA, say) by a paired permutation test on the items both sides answered, with Holm
over that table's rows: a rate is not an accuracy, so McNemar does not apply to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.metrics.permutation import PERMUTATION, PERMUTATIONS, SignFlip, sign_flip
from lingdiag.metrics.stats import BOOTSTRAP_SAMPLES, holm_rows, paired_difference_ci
from lingdiag.reading import RunSummary, records_of, suite_of
from lingdiag.records import ItemRecord
from lingdiag.rundir import RunStore
from lingdiag.suite import Suite

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

METHODS = {"p": "exact McNemar (statsmodels)",
           "ci95": "paired bootstrap over items (multinomial counts of the discordant items), percentile",
           "p_holm": "Holm over the table's rows", "permutation_p": PERMUTATION,
           "permutation_p_holm": "Holm over the permutation table's rows"}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Side A against side B on the items both answered."""

    condition: str
    """The condition (``A vs B`` when two conditions of one run are compared)."""
    n: int
    """Paired items."""
    acc_a: float
    acc_b: float
    diff: float
    """``acc_a - acc_b``."""
    ci95: tuple[float, float]
    only_a: int
    """Items A got right and B wrong."""
    only_b: int
    p: float
    p_holm: float = float("nan")


@dataclass(frozen=True, slots=True, kw_only=True)
class PermutationTest(SignFlip):
    """One of the suite's rates or gaps, side A against side B on the items both answered: the sign-flip
    test's result (:class:`~lingdiag.metrics.permutation.SignFlip`), named, with its Holm p-value.
    """

    condition: str
    metric: str
    """The key in the suite's metrics (``tbr_C``, ``delta_aa``, ...)."""
    n: int
    """Paired items (answered on both sides; unparsed answers included)."""
    p_holm: float = float("nan")


def _item_id(r: ItemRecord) -> str:
    return r.item_id


def _pairs(a: Sequence[ItemRecord], b: Sequence[ItemRecord],
           key: Callable[[ItemRecord], str] = _item_id) -> list[tuple[bool, bool]]:
    right_b = {key(r): bool(r.correct) for r in b if r.correct is not None}
    return [(bool(r.correct), right_b[key(r)]) for r in a if r.correct is not None and key(r) in right_b]


def _mcnemar() -> Any:
    try:
        from statsmodels.stats.contingency_tables import mcnemar
    except ModuleNotFoundError:
        raise MissingDependency("lingdiag compare", "stats", ["statsmodels"]) from None
    return mcnemar


def paired(name: str, a: Sequence[ItemRecord], b: Sequence[ItemRecord], *, seed: int = 0,
           samples: int = BOOTSTRAP_SAMPLES, key: Callable[[ItemRecord], str] = _item_id) -> Comparison:
    """Compare two sets of records of the same items (matched by item id, or by ``key``: the
    ``align`` tag of translations).

    Args:
        name: What the row is called.
        a: Side A's records.
        b: Side B's records.
        seed: Seeds the bootstrap.
        samples: Bootstrap resamples.
        key: What matches a record of A with one of B.

    Returns:
        The comparison (``p_holm`` is set by ``compare``).
    """
    import numpy as np

    pairs = np.array(_pairs(a, b, key), dtype=bool).reshape(-1, 2)
    return tested(name, pairs[:, 0], pairs[:, 1], seed=seed, samples=samples)


def tested(name: str, right_a: NDArray[np.bool_], right_b: NDArray[np.bool_], *, seed: int = 0,
           samples: int = BOOTSTRAP_SAMPLES) -> Comparison:
    """The paired test of two sides already paired item by item (``right_a[k]`` and ``right_b[k]``: the same
    item, graded on both sides): what :func:`paired` computes, and what a study computes from its columns.

    Raises:
        ConfigError: no pair.
    """
    import numpy as np

    n = len(right_a)
    if not n:
        raise ConfigError(f"{name}: no item with a gold label on both sides")
    only_a = int((right_a & ~right_b).sum())
    only_b = int((right_b & ~right_a).sum())
    both = int((right_a & right_b).sum())
    table = [[both, only_a], [only_b, n - both - only_a - only_b]]
    p = float(_mcnemar()(table, exact=True).pvalue)
    ci = paired_difference_ci(only_a, only_b, n, np.random.default_rng(seed), samples)
    acc_a, acc_b = float(right_a.mean()), float(right_b.mean())
    return Comparison(name, n, acc_a, acc_b, (only_a - only_b) / n, ci, only_a, only_b, p)


def permuted(suite: Suite, name: str, a: Sequence[ItemRecord], b: Sequence[ItemRecord], *, seed: int = 0,
             permutations: int = PERMUTATIONS) -> list[PermutationTest]:
    """Paired permutation tests of every rate and gap the suite declares, on the items both answered.

    Args:
        suite: Whose ``paired_metrics`` are tested.
        name: What the rows are called.
        a: Side A's answered records.
        b: Side B's answered records.
        seed: Seeds the drawn permutations.
        permutations: Draws when exact enumeration would be larger.

    Returns:
        One row per metric defined on both sides (``p_holm`` is set by ``holm_rows``).
    """
    by_b = {r.item_id: r for r in b}
    shared = [r for r in a if r.item_id in by_b]
    pa, pb = shared, [by_b[r.item_id] for r in shared]
    rows = []
    for metric, count in suite.paired_metrics.items():
        t = sign_flip(count, pa, pb, seed=seed, permutations=permutations)
        if t.permutations:  # NaN: the metric is undefined here (no group C item, no rating, ...)
            rows.append(PermutationTest(condition=name, metric=metric, n=len(shared), **asdict(t)))
    return rows


def _suite(run: Path) -> Suite:
    return suite_of(RunStore(run).read_meta(), run)


def _by_condition(run: Path) -> dict[str, list[ItemRecord]]:
    store = RunStore(run)
    store.read_meta()  # a clear error if this is not a run directory
    out: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records_of(run):
        if r.error is None:
            out[r.condition].append(r)
    return out


def _shared(run_a: Path, run_b: Path) -> tuple[dict[str, list[ItemRecord]], dict[str, list[ItemRecord]], list[str]]:
    a, b = _by_condition(run_a), _by_condition(run_b)
    shared = [c for c in a if c in b]
    if not shared:
        raise ConfigError(f"{run_a} and {run_b} share no condition (A: {', '.join(a)}; B: {', '.join(b)})")
    return a, b, shared


def compare_runs(run_a: Path, run_b: Path, *, seed: int = 0, skip: Collection[str] = ()) -> list[Comparison]:
    """Every condition the two runs share (but ``skip``), paired on the items both answered, Holm-corrected."""
    a, b, shared = _shared(run_a, run_b)
    return holm_rows([paired(c, a[c], b[c], seed=seed) for c in shared if c not in skip])


def compare_summaries(a: RunSummary, b: RunSummary, *, seed: int = 0, skip: Collection[str] = ()) -> list[Comparison]:
    """:func:`compare_runs` on two runs' summaries (their records as columns, sharing one vocabulary): the same
    rows, from arrays (the viewer's compare page over runs of 100,000 items).
    """
    conditions = a.vocab.conditions.names
    ca, cb = dict.fromkeys(a.columns.condition.tolist()), set(b.columns.condition.tolist())
    shared = [c for c in ca if c in cb]
    if not shared:
        raise ConfigError(f"{a.run.path} and {b.run.path} share no condition (A: "
                          f"{', '.join(conditions[c] for c in ca)}; B: {', '.join(conditions[c] for c in cb)})")
    return holm_rows([_tested_lines(conditions[c], a, a.columns.of(c), b, b.columns.of(c), seed)
                      for c in shared if conditions[c] not in skip])


def compare_summary_conditions(run: RunSummary, cond_a: str, cond_b: str, *, seed: int = 0) -> list[Comparison]:
    """:func:`compare_conditions` on a run's summary."""
    found = {run.vocab.conditions.names[c]: c for c in dict.fromkeys(run.columns.condition.tolist())}
    for c in (cond_a, cond_b):
        if c not in found:
            raise ConfigError(f"{run.run.path} has no condition {c!r}; its conditions: {', '.join(found)}")
    return holm_rows([_tested_lines(f"{cond_a} vs {cond_b}", run, run.columns.of(found[cond_a]), run,
                                    run.columns.of(found[cond_b]), seed)])


def _tested_lines(name: str, a: RunSummary, lines_a: NDArray[np.intp], b: RunSummary, lines_b: NDArray[np.intp],
                  seed: int) -> Comparison:
    """:func:`tested` on two sets of records given by their lines, paired by item (a record without a gold
    label or with a backend error left out on either side, as :func:`paired` does).
    """
    import numpy as np

    from lingdiag.reading.summary import NOT_GRADED, RIGHT

    graded_a = lines_a[a.columns.outcome[lines_a] != NOT_GRADED]
    graded_b = lines_b[b.columns.outcome[lines_b] != NOT_GRADED]
    by_item = dict(zip(b.columns.item[graded_b].tolist(), b.columns.outcome[graded_b].tolist(), strict=True))
    right_a, right_b = [], []
    for item, outcome in zip(a.columns.item[graded_a].tolist(), a.columns.outcome[graded_a].tolist(), strict=True):
        if item in by_item:
            right_a.append(outcome == RIGHT)
            right_b.append(by_item[item] == RIGHT)
    return tested(name, np.array(right_a, bool), np.array(right_b, bool), seed=seed)


def permute_runs(run_a: Path, run_b: Path, *, seed: int = 0, skip: Collection[str] = ()) -> list[PermutationTest]:
    """The suite's rates and gaps in every condition the two runs share (but ``skip``), Holm over all rows."""
    suite = _suite(run_a)
    if (other := _suite(run_b)).name != suite.name:
        raise ConfigError(f"{run_a} is a {suite.name!r} run and {run_b} a {other.name!r} run; "
                          "rates and gaps compare within one suite")
    a, b, shared = _shared(run_a, run_b)
    return holm_rows([t for c in shared if c not in skip for t in permuted(suite, c, a[c], b[c], seed=seed)])


def _two(run: Path, cond_a: str, cond_b: str) -> dict[str, list[ItemRecord]]:
    by = _by_condition(run)
    for c in (cond_a, cond_b):
        if c not in by:
            raise ConfigError(f"{run} has no condition {c!r}; its conditions: {', '.join(by)}")
    return by


def compare_conditions(run: Path, cond_a: str, cond_b: str, *, seed: int = 0) -> list[Comparison]:
    """Two conditions of one run, paired on their shared items."""
    by = _two(run, cond_a, cond_b)
    return holm_rows([paired(f"{cond_a} vs {cond_b}", by[cond_a], by[cond_b], seed=seed)])


def permute_conditions(run: Path, cond_a: str, cond_b: str, *, seed: int = 0) -> list[PermutationTest]:
    """The suite's rates and gaps, two conditions of one run, Holm over the rows."""
    by = _two(run, cond_a, cond_b)
    return holm_rows(permuted(_suite(run), f"{cond_a} vs {cond_b}", by[cond_a], by[cond_b], seed=seed))
