"""examples/suites/imperfective-nli.yaml against the built-in ``imperfective`` suite: the same
requests, labels, metrics and table numbers on the official data with smollm2-135m."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingdiag import RunConfig, evaluate
from lingdiag.engine.run import plan
from lingdiag.io.fetch import fetch
from lingdiag.models.cache import CachedBackend, ResponseCache
from lingdiag.registry import load_plugins
from lingdiag.rundir import RunStore

EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "imperfective-nli.yaml"
STRATEGIES = ["zero-shot", "dap"]
SAME = ("acc_A", "acc_B", "acc_C", "acc_D", "tbr_C", "delta_aa", "false_rate_C", "n", "n_unparsed", "unparsed_rate",
        "delta_aa_ci95", "tbr_C_ci95", "acc_A_ci95", "acc_D_ci95")


def fetched(shared_datasets: Path) -> None:
    load_plugins()  # registers the official files
    fetch("imperfective", mirror=str(shared_datasets))


def configs(limit: int | None) -> tuple[RunConfig, RunConfig]:
    def config(suite: str) -> RunConfig:
        return RunConfig(suite=suite, model="smollm2-135m", dataset="official", limit=limit,
                         axes={"strategy": STRATEGIES})
    return config("imperfective"), config(str(EXAMPLE))


def test_every_request_of_the_file_equals_the_builtin_suites_on_all_400_items(shared_datasets: Path) -> None:
    fetched(shared_datasets)
    builtin, file = (plan(c) for c in configs(None))
    assert len(file.requests()) == 800
    assert file.requests() == builtin.requests()
    assert file.order() == builtin.order()


@pytest.mark.slow
def test_labels_metrics_and_table_equal_the_builtin_suites(shared_datasets: Path, smollm2: object,
                                                           tmp_path: Path) -> None:
    fetched(shared_datasets)
    builtin_config, file_config = configs(24)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    ours = evaluate(builtin_config, CachedBackend(smollm2, cache), tmp_path / "builtin")  # type: ignore[arg-type]
    theirs = evaluate(file_config, CachedBackend(smollm2, cache), tmp_path / "file")  # type: ignore[arg-type]
    # Every request of the file's run was one the built-in run sent: all served from the cache.
    assert theirs.usage["cache_misses"] == 0 and theirs.usage["cache_hits"] == 48

    a = RunStore(tmp_path / "builtin").load_records()
    b = RunStore(tmp_path / "file").load_records()
    assert len(a) == len(b) == 48
    for x, y in zip(a, b, strict=True):
        assert (x.condition, x.item_id, x.prompts, x.outputs, x.label, x.correct, x.gold, x.fields, x.tags) == \
               (y.condition, y.item_id, y.prompts, y.outputs, y.label, y.correct, y.gold, y.fields, y.tags)
        assert x.detail["rule"] == y.detail["rule"]
    for strategy in STRATEGIES:
        for key in SAME:
            assert ours.metrics[strategy][key] == theirs.metrics[strategy][key], (strategy, key)

    def numbers(table: str) -> list[str]:
        return [line.split("|", 2)[2] for line in table.splitlines() if line.startswith(("| zero-shot", "| dap"))]

    assert numbers(theirs.table) == numbers(ours.table)[:2] and len(numbers(theirs.table)) == 2
