"""The lm-evaluation-harness side of the benchmark; runs in ``bench/.work/venv``.

Usage: ``python lmeval_worker.py {loglik|gen} MODEL_DIR REQUESTS.json RESULT.json``.

Loads the model with lm-eval's ``HFLM`` (float32, CPU, batch 16, 2 torch threads), then
times only the request phase (``loglikelihood`` or ``generate_until`` on ``Instance``s),
as the baseline table of issue 5 does. Writes the answers, the seconds and the process's
peak RSS.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def main() -> None:
    """Run one task and write its result file."""
    task, model_dir, requests_file, result_file = sys.argv[1:5]
    import torch

    torch.set_num_threads(2)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model_dir, device="cpu", dtype="float32", batch_size=16)
    torch.set_num_threads(2)
    data = json.loads(Path(requests_file).read_text(encoding="utf-8"))
    if task == "loglik":
        instances = [Instance("loglikelihood", {}, (c, x), i) for i, (c, x) in enumerate(data["requests"])]
        start, cpu_start = time.perf_counter(), time.process_time()
        answers = [[float(lp), bool(g)] for lp, g in lm.loglikelihood(instances, disable_tqdm=True)]
    else:
        kwargs = {"until": [], "max_gen_toks": data["max_new_tokens"], "do_sample": False}
        instances = [Instance("generate_until", {}, (p, dict(kwargs)), i) for i, p in enumerate(data["prompts"])]
        start, cpu_start = time.perf_counter(), time.process_time()
        answers = list(lm.generate_until(instances, disable_tqdm=True))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    result = {"seconds": seconds, "cpu_seconds": cpu, "answers": answers, "peak_rss_mb": peak}
    Path(result_file).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
