"""Leave-one-model-out: how far an anchors-only estimate falls from each model's real accuracy, on
the ExpliCa authors' outputs (8 models on perplexity, 7 on zero-shot acceptability ratings, 6 on
zero-shot cloze, greedy answers as cleaned by the authors; imported as runs with ``lingdiag score explica``)
and on a study run here (the embedded SmolLM2-135M and stand-in models of graded ability on 1,000
BLiMP pairs). Prints, per model, the real accuracy, the estimate from K anchors (1PL and 2PL), and
the standard error of K random items (the baseline, same command); the error over ``--seeds`` anchor
draws (one draw is one sample of a random quantity).

    python bench/items_validate.py [--k 100] [--seeds 10] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.config import RunConfig
from lingdiag.io.fetch import fetch
from lingdiag.items import validate
from lingdiag.items.matrix import read_matrices
from lingdiag.models.base import Backend
from lingdiag.models.door import load_model
from lingdiag.models.mock import MockBackend
from lingdiag.registry import load_plugins
from lingdiag.study.execute import Models, run_study
from lingdiag.study.schema import StudyFile

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
PAIRS = DATASETS / "blimp" / "determiner_noun_agreement_2.jsonl"
ABILITIES = [-2.0, -1.5, -1.0, -0.6, -0.3, 0.0, 0.3, 0.6, 1.0, 1.5, 2.0]
"""The stand-ins' abilities (logits); an item's difficulty is drawn from N(0, 1) by its pair."""


TASKS = {"perplexity": ("perplexity/*.csv", "perplexity", ["--score-col", "perplexity", "--connective-col",
                                                          "conn_in_list"]),
         "rating": ("acceptability/zeroshot/*.tsv", "rating", ["--score-col", "answer_greedy_cleaned",
                                                               "--connective-col", "conn_in_list"]),
         "cloze": ("cloze/zeroshot/*.tsv", "cloze", ["--score-col", "answer_greedy_cleaned"])}
"""The authors' files imported per task: (glob under explica_results, --task, the columns read)."""


def explica_runs(work: Path, task: str) -> list[Path]:
    load_plugins()
    mount_suites()
    fetch("explica", str(DATASETS))
    pattern, name, columns = TASKS[task]
    runs = []
    for path in sorted((DATASETS / "explica_results").glob(pattern)):
        run = work / "explica" / task / path.stem
        if not run.exists():
            result = CliRunner().invoke(app, ["score", "explica", "--dataset", "official", "--scores", str(path),
                                              "--task", name, *columns, "--out", str(run)])
            assert result.exit_code == 0, result.output
        runs.append(run)
    return runs


def _uniform(*parts: object) -> float:
    # SHA-256, not CRC-32: CRC is linear, so "stand:3|p" and "stand:4|p" would draw related numbers and the
    # stand-ins would share a second dimension the item model does not have.
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big") / 2**64


def stand_in(good: dict[str, str], bad: dict[str, str]) -> Any:
    """A loader: ``stand:K`` answers a pair right with probability σ(θ_K − b_pair); others load for real."""
    def load(config: RunConfig) -> Backend:
        if not config.model.startswith("stand:"):
            return load_model(config)
        theta = ABILITIES[int(config.model.split(":")[1])]

        def loglik(r: Any) -> float:
            text = (r.context + r.continuation).strip()
            pair = good.get(text) or bad.get(text)
            if pair is None:
                return -50.0
            difficulty = math.sqrt(2) * _erfinv(2 * _uniform("b", pair) - 1)
            right = _uniform(config.model, pair) < 1 / (1 + math.exp(-(theta - difficulty)))
            return -1.0 if (text in good) == right else -2.0
        return MockBackend(loglik_fn=loglik, name=config.model)
    return Models(load, check=lambda config: None)


def _erfinv(y: float) -> float:
    from scipy.special import erfinv

    return float(erfinv(y))


def study(work: Path) -> Path:
    rows = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    good = {r["sentence_good"].strip(): str(r["pairID"]) for r in rows}
    bad = {r["sentence_bad"].strip(): str(r["pairID"]) for r in rows}
    spec = StudyFile.model_validate({
        "name": "items-validation", "base": work,
        "models": [{"spec": "smollm2-135m", "family": "smollm2"},
                   *({"spec": f"stand:{k}", "name": f"stand-{k:02d}", "family": "stand-in"}
                     for k in range(len(ABILITIES)))],
        "suites": [{"suite": "minimal-pairs", "dataset": str(PAIRS), "name": "blimp-dna2"}]})
    out = work / "study"
    run_study(spec, out, models=stand_in(good, bad), say=print)
    return out


def report(name: str, paths: list[Path], k: int, seeds: int) -> None:
    for m in read_matrices(paths).cells:
        for kind in ("1pl", "2pl"):
            runs = [validate.leave_one_out(m, k, kind, seed=seed) for seed in range(seeds)]
            held = runs[0]
            errors = np.array([[h.error for h in run] for run in runs])
            rms_random = math.sqrt(sum(h.random_se**2 for h in held) / len(held))
            print(f"{name} {m.suite}/{m.condition}, {kind.upper()}, K = {k}, anchors of seeds 0-{seeds - 1}: "
                  f"RMS error {math.sqrt(float((errors**2).mean())):.3f} (random {k} items: {rms_random:.3f}); "
                  f"within 0.05: {float((abs(errors) <= 0.05).mean()):.0%} of estimates; every model within "
                  f"0.05: {int((abs(errors) <= 0.05).all(1).sum())} of {seeds} seeds; largest {abs(errors).max():.3f}")
            print(f"  seed 0: RMS {validate.rms(held):.3f}; interval covers {sum(h.covered for h in held)} of "
                  f"{len(held)}")
            for h in held:
                print(f"  {h.model:32s} accuracy {h.accuracy:.3f}  estimate {h.estimate:.3f} "
                      f"[{h.low:.3f}, {h.high:.3f}]  error {h.error:+.3f}  random SE {h.random_se:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--study-only", action="store_true")
    parser.add_argument("--seeds", type=int, default=10, help="anchor seeds to average the error over")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="items-validate-"))
    if not args.study_only:
        for task in TASKS:
            report(f"ExpliCa {task} (greedy, zero-shot where prompted)", explica_runs(work, task), args.k, args.seeds)
    report("Study", [study(work)], args.k, args.seeds)


if __name__ == "__main__":
    main()
