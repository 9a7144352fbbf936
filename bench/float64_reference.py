"""Which side of (1)'s largest log-prob differences is off: both against a float64 forward pass.

Usage, after ``make bench``: ``.venv/bin/python bench/float64_reference.py [K]``. Reads the
benchmark's request and result files in ``bench/.work``, takes the K requests (default 3) on
which lm-eval and lingdiag differ most, and scores them again with the model in float64 and a
float64 log-softmax, tokenized as lingdiag does; lingdiag on torch's default kernels
(``packed_linears=false``) is shown beside its default oneDNN-packed layers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"


def main() -> None:
    """Print lm-eval's, lingdiag's and the float64 log-prob of each of the K requests."""
    import torch

    from lingdiag.models.embedded import ensure_converted
    from lingdiag.models.hf import HFBackend
    from lingdiag.models.hf.placement import resolve
    from lingdiag.models.hf.tokens import split_request
    from lingdiag.records import LoglikelihoodRequest

    k = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    requests = json.loads((WORK / "loglik-requests.json").read_text())["requests"]
    ref = json.loads((WORK / "lmeval_worker-loglik.json").read_text())["answers"]
    ours = json.loads((WORK / "lingdiag_worker-loglik.json").read_text())["answers"]
    worst = sorted(range(len(requests)), key=lambda i: -abs(ref[i][0] - ours[i][0]))[:k]
    unpacked = json.loads((WORK / "lingdiag_worker-loglik-unpacked.json").read_text())["answers"]
    # torch's own layers: packed oneDNN weights are float32 only.
    backend = HFBackend(str(ensure_converted("smollm2-135m")[0]), placement=resolve(threads=2, packed_linears=False))
    model = backend.model.double()
    for i in worst:
        split = split_request(backend.loaded, LoglikelihoodRequest(*requests[i]))
        context, continuation = split.ctx, split.cont
        with torch.inference_mode():
            logp = torch.log_softmax(model(torch.tensor([context + continuation])).logits[0].double(), -1)
        exact = sum(logp[len(context) - 1 + j, t].item() for j, t in enumerate(continuation))
        print(f"request {i} ({len(continuation)} tokens): lm-eval {ref[i][0]:.6f} (off by {ref[i][0] - exact:+.2e}), "
              f"lingdiag {ours[i][0]:.6f} (off by {ours[i][0] - exact:+.2e}), lingdiag on torch's kernels "
              f"{unpacked[i][0]:.6f} (off by {unpacked[i][0] - exact:+.2e}), float64 {exact:.6f}")


if __name__ == "__main__":
    main()
