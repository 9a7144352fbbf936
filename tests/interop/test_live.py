"""One fresh log per harness, made here by the harness itself on the embedded SmolLM2 and imported at once,
so a new lm-eval or inspect version whose log drifts from the shape this reader knows shows here (the
committed logs in tests/fixtures/harness stay as the versions of the day wrote them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
def test_a_fresh_lm_eval_log_imports_with_lm_evals_accuracy(tmp_path: Path) -> None:
    pytest.importorskip("lm_eval", reason="lm_eval is not installed (the lmeval extra)")
    model = smollm2_dir()
    shutil.copytree(FIXTURES / "lm-eval" / "tasks", tmp_path / "tasks")
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
         "--tasks", "lingdiag_pairs", "--include_path", ".", "--device", "cpu", "--batch_size", "4", "--limit", "3",
         "--output_path", str(tmp_path / "logs"), "--log_samples"],
        cwd=tmp_path / "tasks", env={**os.environ, **OFFLINE}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [results] = list((tmp_path / "logs").rglob("results_*.json"))
    [root] = import_all(lmeval.read(results), tmp_path / "runs")
    run = load_run(root)
    assert run.rows[0].metrics["n"] == 3
    assert run.rows[0].metrics["accuracy"] == json.loads(results.read_text())["results"]["lingdiag_pairs"]["acc,none"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # inspect's model server's streams
def test_a_fresh_inspect_log_imports_with_inspects_score(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (the inspect extra)")
    from inspect_ai import eval as inspect_eval

    from lingdiag.interop import inspect_log

    model = smollm2_dir()
    sys.path.insert(0, str(FIXTURES / "inspect"))
    try:
        from nli_tasks import nli_words
    finally:
        sys.path.pop(0)
    for key, value in OFFLINE.items():
        os.environ.setdefault(key, value)
    [log] = inspect_eval(nli_words(), model="hf/smollm2-135m", model_args={"model_path": str(model), "device": "cpu",
                                                                          "do_sample": False},
                         max_tokens=8, limit=2, seed=0, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and log.location
    [root] = import_all(inspect_log.read(Path(log.location), ["True", "False", "Neither"]), tmp_path / "runs")
    assert log.results is not None
    assert load_run(root).rows[0].metrics["harness_accuracy"] == log.results.scores[0].metrics["accuracy"].value
    [again] = reread(root)
    assert again.n == 2
