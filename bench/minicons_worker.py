"""The minicons side of the BLiMP benchmark; runs in ``bench/.work/venv-minicons``.

Usage: ``python minicons_worker.py seq MODEL_DIR REQUESTS.json RESULT.json``.

Loads the model with minicons' ``IncrementalLMScorer`` (float32, CPU, 2 torch threads) and
scores the sentences with ``sequence_score`` in its default convention (no BOS; the first
token is not scored), summed log-probs, 16 sentences per call; times only the scoring.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

BATCH = 16


def main() -> None:
    """Score every sentence and write the result file."""
    _, model_dir, requests_file, result_file = sys.argv[1:5]
    import torch

    torch.set_num_threads(2)
    from minicons import scorer

    lm = scorer.IncrementalLMScorer(model_dir, "cpu")
    torch.set_num_threads(2)
    sentences = json.loads(Path(requests_file).read_text(encoding="utf-8"))["sentences"]
    start, cpu_start = time.perf_counter(), time.process_time()
    answers: list[float] = []
    for k in range(0, len(sentences), BATCH):
        answers += [float(x) for x in lm.sequence_score(sentences[k:k + BATCH], reduction=lambda x: x.sum(0).item())]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(result_file).write_text(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "answers": answers,
                                             "peak_rss_mb": peak}))


if __name__ == "__main__":
    main()
