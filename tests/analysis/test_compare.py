"""``lingdiag compare``: exact McNemar, seeded paired bootstrap, Holm — checked against independent
computations on the same 2x2 tables."""

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate, run
from lingdiag.models.mock import MockBackend
from lingdiag.rundir import RunStore

runner = CliRunner()


@pytest.fixture(autouse=True)
def _cli() -> None:
    mount_suites()


def table_of(run_a: Path, run_b: Path, condition: str) -> tuple[int, int, int]:
    """(n, A right & B wrong, A wrong & B right), computed straight from the two items.jsonl files."""
    a = {r.item_id: r.correct for r in RunStore(run_a).load_records() if r.condition == condition}
    b = {r.item_id: r.correct for r in RunStore(run_b).load_records() if r.condition == condition}
    shared = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    return len(shared), sum(bool(a[k] and not b[k]) for k in shared), sum(bool(b[k] and not a[k]) for k in shared)


def compare(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["compare", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def two_runs(tmp_path: Path) -> None:
    """Two "models" in ``tmp_path/a`` and ``/b``: one always says True, one answers by the premise
    length (different items right)."""
    always = MockBackend(generate_fn=lambda r: "True")
    by_length = MockBackend(generate_fn=lambda r: ("False", "True", "Unknown")[len(r.messages[-1].content) % 3])
    axes = {"strategy": ["zero-shot", "dap"]}
    evaluate(RunConfig(suite="imperfective", model="mock", axes=axes), always, tmp_path / "a")
    evaluate(RunConfig(suite="imperfective", model="mock", axes=axes), by_length, tmp_path / "b")


def test_mcnemar_bootstrap_and_holm_on_two_runs(tmp_path):
    two_runs(tmp_path)
    got = compare(str(tmp_path / "a"), str(tmp_path / "b"), "--seed", "3")
    rows = {r["condition"]: r for r in got["rows"]}
    assert set(rows) == {"zero-shot", "dap"}
    for condition, row in rows.items():
        n, only_a, only_b = table_of(tmp_path / "a", tmp_path / "b", condition)
        assert (row["n"], row["only_a"], row["only_b"]) == (n, only_a, only_b)
        assert only_a + only_b > 0
        # Exact McNemar = two-sided binomial test on the discordant items.
        assert row["p"] == pytest.approx(binomtest(only_a, only_a + only_b, 0.5).pvalue, rel=1e-9)
        assert row["diff"] == pytest.approx((only_a - only_b) / n)
        assert row["ci95"][0] <= row["diff"] <= row["ci95"][1]
    ps = sorted(r["p"] for r in rows.values())
    assert sorted(r["p_holm"] for r in rows.values()) == pytest.approx([min(1, 2 * ps[0]), max(min(1, 2 * ps[0]),
                                                                                               ps[1])])
    again = compare(str(tmp_path / "a"), str(tmp_path / "b"), "--seed", "3")
    other = compare(str(tmp_path / "a"), str(tmp_path / "b"), "--seed", "4")
    assert again == got and other["rows"][0]["ci95"] != got["rows"][0]["ci95"]


def test_two_conditions_of_one_run_and_errors(tmp_path):
    mock = MockBackend(generate_fn=lambda r: "True" if "rule" in r.messages[0].content.lower() else "False")
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot", "dap"]}), mock,
             tmp_path / "r")
    got = compare(str(tmp_path / "r"), "--between", "zero-shot", "dap")
    assert got["rows"][0]["condition"] == "zero-shot vs dap" and got["rows"][0]["n"] > 0
    bad = runner.invoke(app, ["compare", str(tmp_path / "r"), "--between", "zero-shot", "cot"])
    assert bad.exit_code != 0 and "no condition 'cot'" in str(bad.exception)
    lonely = runner.invoke(app, ["compare", str(tmp_path / "r")])
    assert lonely.exit_code != 0 and "expected two runs" in str(lonely.exception)


def test_rates_and_gaps_by_paired_permutation(tmp_path):
    from statsmodels.stats.multitest import multipletests

    from lingdiag.suite import SUITES

    suite = SUITES.get("imperfective")
    two_runs(tmp_path)
    got = compare(str(tmp_path / "a"), str(tmp_path / "b"), "--seed", "3")
    perms = got["permutation"]
    assert {(t["condition"], t["metric"]) for t in perms} == {(c, m) for c in ("zero-shot", "dap")
                                                              for m in suite.paired_metrics}
    assert "permutation" in got["methods"]["permutation_p"]
    for t in perms:
        # The values are the suite's own metrics of each side.
        a = [r for r in RunStore(tmp_path / "a").load_records() if r.condition == t["condition"]]
        b = [r for r in RunStore(tmp_path / "b").load_records() if r.condition == t["condition"]]
        assert t["a"] == suite.condition_metrics(a)[t["metric"]] and t["b"] == suite.condition_metrics(b)[t["metric"]]
        assert t["n"] == len(a) and not t["exact"] and t["permutations"] == 10_000
    big = next(t for t in perms if t["metric"] == "tbr_C")  # always "True" against a third of the time
    assert big["diff"] > 0.5 and big["p"] == pytest.approx(1 / 10_001)
    # Holm over the whole permutation table (the McNemar table has its own).
    assert [t["p_holm"] for t in perms] == pytest.approx(list(multipletests([t["p"] for t in perms],
                                                                           method="holm")[1]))
    # Two conditions of one run, the same way; the text table names the method.
    within = compare(str(tmp_path / "b"), "--between", "zero-shot", "dap")["permutation"]
    assert {t["condition"] for t in within} == {"zero-shot vs dap"} and len(within) == len(suite.paired_metrics)
    text = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")]).stdout
    assert "Rates and gaps" in text and "| zero-shot | delta_aa |" in text and "paired permutation" in text


@pytest.mark.slow
def test_compare_real_runs_matches_statsmodels(tmp_path):
    from statsmodels.stats.contingency_tables import mcnemar

    for source in ("authors", "paper"):
        run(RunConfig(suite="imperfective", model="smollm2-135m", dataset="builtin", limit=24,
                      axes={"strategy": ["zero-shot"]}, options={"prompt_source": source, "max_new_tokens": 8}),
            tmp_path / source)
    (row,) = compare(str(tmp_path / "authors"), str(tmp_path / "paper"))["rows"]
    a = {r.item_id: bool(r.correct) for r in RunStore(tmp_path / "authors").load_records()}
    b = {r.item_id: bool(r.correct) for r in RunStore(tmp_path / "paper").load_records()}
    cells = [[sum(a[k] == x and b[k] == y for k in a) for y in (True, False)] for x in (True, False)]
    assert row["p"] == pytest.approx(mcnemar(cells, exact=True).pvalue, rel=1e-12)
    assert row["n"] == 24 and (row["only_a"], row["only_b"]) == (cells[0][1], cells[1][0])
