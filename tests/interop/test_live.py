"""One fresh log per harness, made here by the harness itself on the embedded SmolLM2 and imported at once,
so a new lm-eval or inspect version whose log drifts from the shape this reader knows shows here (the
committed logs in tests/fixtures/harness stay as the versions of the day wrote them). Both harnesses are
extras in the tested lock and `make install`, so neither test skips without them; each run is as small as
a real run of its harness can be (two samples, the smallest batch, a few new tokens)."""

from __future__ import annotations

import gc
import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers import smollm2_dir

from lingdiag.interop import lmeval
from lingdiag.interop.reread import reread
from lingdiag.interop.runs import import_all
from lingdiag.reading import load_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.mark.slow
def test_a_fresh_lm_eval_log_imports_with_lm_evals_accuracy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lm-eval's own Python API, as its command line calls it (simple_evaluate, then the EvaluationTracker writes
    # results_*.json and samples_*.jsonl), in this process: the command line spends 12 s importing torch and lm-eval
    # again and 28 s indexing lm-eval's thousands of built-in tasks, which a task manager of the local tasks skips.
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    model = smollm2_dir()
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "lm-eval" / "tasks", tasks)
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tasks)  # the task's data_files are relative, as its YAML has them
    tracker = EvaluationTracker(output_path=str(tmp_path / "logs"))
    results = simple_evaluate(model="hf", model_args=f"pretrained={model},dtype=float32", tasks=["lingdiag_pairs"],
                              task_manager=TaskManager(include_path=str(tasks), include_defaults=False), device="cpu",
                              batch_size=1, limit=2, log_samples=True, evaluation_tracker=tracker)
    assert results is not None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples(task_name="lingdiag_pairs", samples=samples["lingdiag_pairs"])
    [written] = list((tmp_path / "logs").rglob("results_*.json"))
    [root] = import_all(lmeval.read(written), tmp_path / "runs")
    run = load_run(root)
    assert run.rows[0].metrics["n"] == 2
    assert run.rows[0].metrics["accuracy"] == json.loads(written.read_text())["results"]["lingdiag_pairs"]["acc,none"]
    # Each choice's log-likelihood is the one lm-eval computed, as its samples file holds it.
    assert {r.item_id: r.detail["logprobs"] for r in run.records} == {
        str(s["doc_id"]): [float(resp[0][0]) for resp in s["resps"]] for s in samples["lingdiag_pairs"]}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # inspect's model server's streams
def test_a_fresh_inspect_log_imports_with_inspects_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai import eval as inspect_eval

    from lingdiag.interop import inspect_log

    model = smollm2_dir()
    sys.path.insert(0, str(FIXTURES / "inspect"))
    try:
        from nli_tasks import nli_words
    finally:
        sys.path.pop(0)
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    # Two samples in one batch (inspect's hf provider batches max_connections requests, else waits 2 s for more),
    # two new tokens: SmolLM2's answer here is one word.
    [log] = inspect_eval(nli_words(), model="hf/smollm2-135m", model_args={"model_path": str(model), "device": "cpu",
                                                                          "do_sample": False},
                         max_tokens=2, limit=2, max_connections=2, seed=0, log_dir=str(tmp_path / "logs"),
                         display="none")
    assert log.status == "success" and log.location
    [root] = import_all(inspect_log.read(Path(log.location), ["True", "False", "Neither"]), tmp_path / "runs")
    assert log.results is not None
    assert load_run(root).rows[0].metrics["harness_accuracy"] == log.results.scores[0].metrics["accuracy"].value
    [again] = reread(root)
    assert again.n == 2
    # inspect's model server leaves its streams to the collector: collected here, under this test's filter, not
    # in whichever test runs next.
    gc.collect()
