"""An imported lm-eval run against a lingdiag run of the same items and model: the per-item log-likelihoods
agree within 1e-3 nat where both scored the same tokens. lm-eval scores a BLiMP pair's sentence as the
continuation " <sentence>" (its target delimiter, a space) after the end-of-text token; lingdiag's
``lm-eval`` scoring policy does the same, its default ``lingdiag`` policy scores "<sentence>" without the
space (other tokens: a different number, by several nats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import smollm2_dir
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.interop import lmeval
from lingdiag.interop.runs import import_all
from lingdiag.reading import load_run

HARNESS = Path(__file__).resolve().parents[1] / "fixtures" / "harness" / "lm-eval"


@pytest.mark.slow
def test_lm_evals_log_likelihoods_are_lingdiags_under_the_lm_eval_scoring_policy(tmp_path: Path) -> None:
    smollm2_dir()
    # The pairs lm-eval scored (tasks/pairs.jsonl), as BLiMP's files name them (a paradigm's UID besides).
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(json.loads(line) | {"UID": "lingdiag_pairs"}) + "\n"
                             for line in (HARNESS / "tasks" / "pairs.jsonl").read_text().splitlines()))
    done = CliRunner().invoke(app, ["run", "minimal-pairs", "--dataset", str(pairs), "--model", "smollm2-135m",
                                    "--scoring-policy", "lm-eval", "--out", str(tmp_path / "lingdiag")])
    assert done.exit_code == 0, done.output
    ours = {r.fields["sentence_good"]: (r.detail["logprob_good"], r.detail["logprob_bad"])
            for r in load_run(tmp_path / "lingdiag").records}
    results = next((HARNESS / "logs" / "smollm2-135m").glob("results_*.json"))
    [root] = [r for r in import_all(lmeval.read(results, ["True", "False", "Neither"]), tmp_path / "imported")
              if r.name == "lingdiag_pairs"]
    theirs = {r.fields["choices"][0]: tuple(r.detail["logprobs"]) for r in load_run(root).records}
    assert ours.keys() == theirs.keys() and len(ours) == 8
    gaps = [abs(a - b) for k in ours for a, b in zip(ours[k], theirs[k], strict=True)]
    assert max(gaps) < 1e-3, max(gaps)
