"""The lingdiag side of the BLiMP benchmark; runs in the project's ``.venv``.

Usage: ``python blimp_worker.py POLICY MODEL_DIR REQUESTS.json RESULT.json [--call-tokens N|none]``.

Scores the sentences with lingdiag's transformers backend (float32, CPU, 2 torch threads)
under scoring policy ``POLICY`` (``lm-eval``: the tokens lm-eval's BLiMP task scores;
``minicons``: minicons' default), one call for all; times only the request phase.
``--call-tokens`` replaces the placement's ``call_tokens`` (``none``: no length split).
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys
import time
from pathlib import Path

from lingdiag.models.hf import HFBackend
from lingdiag.models.hf.placement import resolve
from lingdiag.records import LoglikelihoodRequest
from lingdiag.scoring import policy


def main() -> None:
    """Score every sentence and write the result file."""
    name, model_dir, requests_file, result_file = sys.argv[1:5]
    placement = resolve(threads=2)
    if "--call-tokens" in sys.argv:
        value = sys.argv[sys.argv.index("--call-tokens") + 1]
        placement = dataclasses.replace(placement, call_tokens=None if value == "none" else int(value))
    backend = HFBackend(model_dir, placement=placement)
    backend.model  # noqa: B018 - load now: only the request phase is timed
    sentences = json.loads(Path(requests_file).read_text(encoding="utf-8"))["sentences"]
    requests = [LoglikelihoodRequest("", s, policy=policy(name)) for s in sentences]
    start, cpu_start = time.perf_counter(), time.process_time()
    answers = [[r.logprob, r.n_tokens] for r in backend.loglikelihood(requests)]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(result_file).write_text(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "answers": answers,
                                             "peak_rss_mb": peak, "usage": backend.usage()}))


if __name__ == "__main__":
    main()
