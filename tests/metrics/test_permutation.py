"""The paired permutation test of a suite's rates and gaps, against an enumeration that recomputes
the suite's own ``condition_metrics`` for every swap pattern."""

import itertools
import math

import numpy as np
import pytest
from helpers import item_record

from lingdiag.analysis.compare import PermutationTest, permuted
from lingdiag.metrics.permutation import sign_flip
from lingdiag.metrics.stats import holm_rows
from lingdiag.records import UNPARSED, ItemRecord
from lingdiag.suite import SUITES
from lingdiag.suites.imperfective import data, metrics

IMPERFECTIVE = SUITES.get("imperfective")


def rec(item: str, group: str, label: str, condition: str = "a") -> ItemRecord:
    gold = data.GOLD_BY_GROUP[group]
    return item_record(item, label, gold, condition=condition, tags={"group": group, "verb_class": "Creation"})


def sides(pairs: list[tuple[str, str, str]]) -> tuple[list[ItemRecord], list[ItemRecord]]:
    """``(group, label on A, label on B)`` per item → the two sides' records."""
    a = [rec(f"i{k}", g, la, "a") for k, (g, la, _) in enumerate(pairs)]
    b = [rec(f"i{k}", g, lb, "b") for k, (g, _, lb) in enumerate(pairs)]
    return a, b


def enumerated_p(a: list[ItemRecord], b: list[ItemRecord], key: str) -> float:
    """Exact two-sided p: every one of the 2^n swap patterns, each side's metric recomputed by the suite."""
    def diff(x: list[ItemRecord], y: list[ItemRecord]) -> float:
        return IMPERFECTIVE.condition_metrics(x)[key] - IMPERFECTIVE.condition_metrics(y)[key]

    observed = diff(a, b)
    extreme = 0
    patterns = list(itertools.product((False, True), repeat=len(a)))
    for swap in patterns:
        x = [rb if s else ra for ra, rb, s in zip(a, b, swap, strict=True)]
        y = [ra if s else rb for ra, rb, s in zip(a, b, swap, strict=True)]
        extreme += abs(diff(x, y)) >= abs(observed) - 1e-12
    return extreme / len(patterns)


SMALL = [("C", "True", "False"), ("C", "True", "Unknown"), ("C", "True", "True"), ("C", "Unknown", "False"),
         ("C", "True", UNPARSED), ("D", "True", "True"), ("D", "Unknown", "True"), ("D", "True", "False"),
         ("D", "True", "True")]


def test_exact_p_matches_enumeration_with_the_suites_metrics() -> None:
    a, b = sides(SMALL)
    rows = {t.metric: t for t in permuted(IMPERFECTIVE, "a vs b", a, b)}
    assert set(rows) == {"acc_C", "acc_D", "tbr_C", "delta_aa", "false_rate_C"}  # no A or B items: undefined
    for key in ("tbr_C", "delta_aa", "acc_D", "false_rate_C"):
        t = rows[key]
        assert t.exact and t.n == len(SMALL)
        assert (t.a, t.b) == (IMPERFECTIVE.condition_metrics(a)[key], IMPERFECTIVE.condition_metrics(b)[key])
        assert t.p == pytest.approx(enumerated_p(a, b, key), abs=1e-12)
    # TBR_C: 4 of 5 True on A, 1 of 5 on B; only the 3 items where exactly one side says "True" move it.
    assert rows["tbr_C"].diff == pytest.approx(0.6) and rows["tbr_C"].permutations == 2**3


def test_drawn_p_is_seeded_and_close_to_the_exact_one() -> None:
    # 16 group C items, each "True" on one side only: 11 on A, 5 on B.
    a, b = sides([("C", "True", "False")] * 11 + [("C", "False", "True")] * 5)
    metric = metrics.TBR_OF
    exact = sign_flip(metric, a, b, permutations=2**16)
    drawn = sign_flip(metric, a, b, seed=7)
    assert exact.exact and not drawn.exact and drawn.permutations == 10_000
    # Swapping an item flips the sign of its ±1/16: exact p = P(|sum of 16 signs| ≥ 6) = 2·6885/2^16.
    assert exact.p == pytest.approx(2 * 6885 / 2**16)
    assert sign_flip(metric, a, b, seed=7) == drawn  # the same seed, the same p
    assert sign_flip(metric, a, b, seed=8).p != drawn.p
    # 10,000 draws: the Monte Carlo SE of p is at most 0.005.
    assert abs(drawn.p - exact.p) < 0.02 and 0.01 < exact.p < 0.99


def test_large_difference_is_significant_and_a_null_one_is_not() -> None:
    # 60 group C items: A answers "True" on 50, B on 10.
    a, b = sides([("C", "True" if k < 50 else "False", "True" if k < 10 else "False") for k in range(60)])
    big = sign_flip(metrics.TBR_OF, a, b)
    assert big.diff == pytest.approx(40 / 60) and big.p < 0.05 and big.p == pytest.approx(1 / 10_001)
    # The same rates, on different items: each side says "True" on 30, so TBR_C is equal.
    a, b = sides([("C", "True" if k % 2 else "False", "False" if k % 2 else "True") for k in range(60)])
    null = sign_flip(metrics.TBR_OF, a, b)
    assert null.diff == 0 and null.p > 0.5


def test_holm_over_the_permutation_rows() -> None:
    rows = [PermutationTest(0.0, 0.0, 0.0, p, 100, False, condition="c", metric=m, n=10) for m, p in
            (("x", 0.01), ("y", 0.04), ("z", 0.03))]
    adjusted = {t.metric: t.p_holm for t in holm_rows(rows)}
    # Step-down: sorted 0.01, 0.03, 0.04 times 3, 2, 1, made monotone.
    assert adjusted == pytest.approx({"x": 0.03, "z": 0.06, "y": 0.06})


def test_undefined_metric_is_left_out() -> None:
    a, b = sides([("A", "False", "True"), ("A", "True", "True")])
    metric_names = {t.metric for t in permuted(IMPERFECTIVE, "a vs b", a, b)}
    assert metric_names == {"acc_A"}
    assert math.isnan(sign_flip(metrics.TBR_OF, a, b).p)


def test_count_metrics_equal_the_formulas_they_replaced() -> None:
    """CxNLI macro F1 from label_scores, bit for bit (the tables print it), on random answers."""
    from lingdiag.suites.cxnli import data as cx
    from lingdiag.suites.cxnli import metrics as cxm

    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 50):
        records = [ItemRecord(condition="c", axes={}, item_id=str(k), tags={}, fields={}, prompts=[], outputs=[],
                              label=str(rng.choice([*cx.LABELS, UNPARSED])), detail={},
                              gold=str(rng.choice(cx.LABELS[:2])), correct=None) for k in range(n)]
        f1s = [s["f1"] for s in cxm.label_scores(records).values() if not math.isnan(s["f1"])]
        old = sum(f1s) / len(f1s) if f1s else math.nan
        assert cxm.MACRO_F1(records) == old or (math.isnan(old) and math.isnan(cxm.MACRO_F1(records)))


def test_a_permutation_row_is_the_sign_flip_result_named() -> None:
    """One home: a row of the rates-and-gaps table is ``sign_flip``'s result with its condition, metric and n."""
    from dataclasses import asdict, fields

    from lingdiag.metrics.permutation import SignFlip

    a, b = sides([("C", "True" if k < 7 else "False", "False") for k in range(12)])
    row = next(t for t in permuted(IMPERFECTIVE, "a vs b", a, b, seed=3) if t.metric == "tbr_C")
    assert isinstance(row, SignFlip)
    flip = sign_flip(IMPERFECTIVE.paired_metrics["tbr_C"], a, b, seed=3)
    assert {f.name: getattr(row, f.name) for f in fields(SignFlip)} == asdict(flip)
    assert (row.condition, row.metric, row.n) == ("a vs b", "tbr_C", 12)
