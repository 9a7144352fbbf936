"""The lingdiag side of the benchmark; runs in the project's ``.venv``.

Usage: ``python lingdiag_worker.py {loglik|gen} MODEL_DIR REQUESTS.json RESULT.json [--plain] [--fixed]
[--unpacked] [--batch-tokens N] [--dtype D]``.

Loads the model with lingdiag's transformers backend (float32 unless ``--dtype``, CPU, 2 torch
threads; ``--plain`` turns prefix reuse off, ``--fixed`` continuous batching off, ``--unpacked`` the
oneDNN-packed linear layers off, ``--batch-tokens`` sets the batch budget), then times
only the request phase, like the lm-eval worker. Writes the answers, the seconds, the
backend's work counters (tokens through the transformer body, LM-head positions) and the
process's peak RSS.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.records import ChatMessage, GenerationRequest, LoglikelihoodRequest


def main() -> None:
    """Run one task and write its result file."""
    task, model_dir, requests_file, result_file = sys.argv[1:5]
    options = sys.argv[5:]
    budget = int(options[options.index("--batch-tokens") + 1]) if "--batch-tokens" in options else None
    dtype = options[options.index("--dtype") + 1] if "--dtype" in options else "float32"
    backend = HFBackend(model_dir, HFOptions(threads=2, batch_tokens=budget, dtype=dtype,  # type: ignore[arg-type]
                                             packed_linears="--unpacked" not in options,
                                             prefix_reuse="--plain" not in options,
                                             continuous_batching="--fixed" not in options))
    backend.model  # noqa: B018 - load now: only the request phase is timed
    data = json.loads(Path(requests_file).read_text(encoding="utf-8"))
    answers: list[object]
    if task == "loglik":
        requests = [LoglikelihoodRequest(c, x) for c, x in data["requests"]]
        start, cpu_start = time.perf_counter(), time.process_time()
        answers = [[r.logprob, r.n_tokens, r.is_greedy] for r in backend.loglikelihood(requests)]
    else:
        gen = [GenerationRequest(messages=tuple(ChatMessage(m["role"], m["content"]) for m in msgs),
                                 max_new_tokens=data["max_new_tokens"]) for msgs in data["messages"]]
        start, cpu_start = time.perf_counter(), time.process_time()
        answers = [g.text for g in backend.generate(gen)]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    result = {"seconds": seconds, "cpu_seconds": cpu, "answers": answers, "peak_rss_mb": peak,
              "usage": backend.usage()}
    Path(result_file).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
