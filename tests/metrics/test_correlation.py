"""Correlation intervals: the item bootstrap of Spearman ρ (ExpliCa, Table 13 and the competence
table) against scipy on written-out resamples, and the Fisher z interval of Pearson r."""

import math

import numpy as np
import pytest
from helpers import item_record
from scipy.stats import pearsonr, spearmanr

from lingdiag.metrics.core import CI_METHODS
from lingdiag.metrics.correlation import SPEARMAN_BOOTSTRAP, spearman_ci, weighted_spearman
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.suites.explica import metrics as explica_metrics
from lingdiag.suites.imperfective.analysis import Analysis, prompt_tradeoff, to_markdown

CONNECTIVES = ("so", "because", "then", "after")


def test_weighted_spearman_is_spearman_of_the_written_out_resample() -> None:
    rng = np.random.default_rng(3)
    items = np.repeat(np.arange(10), 4)  # four points per item, as ExpliCa's four connectives
    x = rng.integers(-1, 11, 40).astype(float)  # ratings, -1 included, heavily tied
    y = np.round(x + rng.normal(0, 3, 40), 1)
    counts = rng.multinomial(10, [0.1] * 10, size=6).astype(float)
    got = weighted_spearman(x, y, items, counts)
    for b in range(6):
        copies = counts[b, items].astype(int)
        assert got[b] == pytest.approx(spearmanr(np.repeat(x, copies), np.repeat(y, copies)).statistic, abs=1e-12)


def test_spearman_interval_is_seeded_and_holds_the_estimate() -> None:
    rng = np.random.default_rng(0)
    x = list(rng.integers(1, 11, 200).astype(float))
    y = list(np.asarray(x) + rng.normal(0, 4, 200))
    items = [k // 4 for k in range(200)]
    rho = spearmanr(x, y).statistic
    ci = spearman_ci(x, y, items, seed=0)
    assert ci == spearman_ci(x, y, items, seed=0) and ci != spearman_ci(x, y, items, seed=1)
    assert ci[0] < rho < ci[1] and 0 < ci[0] and ci[1] - ci[0] < 0.5
    assert all(math.isnan(v) for v in spearman_ci([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [0, 1, 2]))


def rated(k: int, relation: str, noise: float) -> ItemRecord:
    human = {c: float(j + 2) for j, c in enumerate(CONNECTIVES)}
    ratings = {c: min(10, max(1, round(v + noise * (-1) ** (k + j)))) for j, (c, v) in enumerate(human.items())}
    return item_record(f"{relation}{k}", "so", "so", condition="rating", axes={"task": "rating"},
                       tags={"relation": relation, "type": relation.split("_")[0], "order": "iconic"},
                       fields={"human": human}, detail={"ratings": ratings})


def test_explica_table13_cells_carry_their_interval_and_method() -> None:
    records = [rated(k, r, noise) for k in range(12) for r, noise in
               (("causal_iconic", 1.0), ("temporal_iconic", 3.0))]
    m = explica_metrics.metrics(records)
    assert m[CI_METHODS] == {explica_metrics.SPEARMAN: SPEARMAN_BOOTSTRAP}
    for cell in ("causal_iconic", "temporal_iconic", "all"):
        s = m[explica_metrics.SPEARMAN][cell]
        assert s["rho_ci95"][0] <= s["rho"] <= s["rho_ci95"][1]
    assert m[explica_metrics.SPEARMAN]["all"]["rho_ci95"] == explica_metrics.metrics(records)["spearman"]["all"][
        "rho_ci95"]
    assert all(math.isnan(v) for v in m[explica_metrics.SPEARMAN]["unrelated"]["rho_ci95"])  # no points


def test_pearson_interval_is_scipys_fisher_z() -> None:
    strategies = ("zero-shot", "dap", "cot", "counterfactual")
    acc_c, acc_d = (0.1, 0.3, 0.35, 0.8), (0.9, 0.7, 0.75, 0.5)
    rows = [ResultRow("m", s, {"strategy": s}, {"acc_C": c, "acc_D": d})
            for s, c, d in zip(strategies, acc_c, acc_d, strict=True)]
    (t,) = prompt_tradeoff(rows)
    for corr, ys in ((t.corr_c, acc_c), (t.corr_d, acc_d)):
        assert corr is not None
        ci = pearsonr([0.0, 1.0, 2.0, 3.0], ys).confidence_interval(0.95)
        assert corr.ci95 == pytest.approx((ci.low, ci.high), abs=1e-15)
    text = to_markdown(Analysis((t,), None, None, ()))
    assert t.corr_c is not None and t.corr_c.ci95 is not None
    assert f"[{t.corr_c.ci95[0]:.2f}, {t.corr_c.ci95[1]:.2f}]" in text and "Fisher z" in text
