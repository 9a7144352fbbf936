"""Where the study-scale scoring time goes on a card, and the levers beside it (one short lease).

``python bench/gpu_profile.py TOKENIZER_DIR OUT.json`` on a CUDA machine (on the CPU it runs the tiny
model at a few items, to check the script): ``bench/gpu.py``'s 8B-shaped random Llama in bf16 scores
4,000 BLiMP-sized pairs (``study_scale.blimp_pairs``) with the prefix tree, then half of them again
under ``torch.profiler`` and cProfile (the tables go into the file), then the same pairs packed,
plain (no prefix sharing), and with 1,024 rows a batch; lm-eval's ``HFLM`` at batch 64 and 256 where
it is importable; then ``study_choices`` at 600 items and ``study_long_generation`` at 64 prompts ×
256 tokens. The file is rewritten after each step, so a lease that ends early keeps what ran.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import gpu  # beside this script: run as `python bench/gpu_profile.py`, bench/ is on sys.path
import study_scale
import torch
from torch.profiler import ProfilerActivity, profile

from lingdiag.io.atomic import write_atomic
from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.models.hf.placement import Placement, resolve


def main(tokenizer_dir: str, out: Path) -> None:
    """Profile, time the levers and write the figures to ``out``."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    cuda = torch.cuda.is_available()
    shape, dtype, device = (gpu.EIGHT_B, torch.bfloat16, "cuda") if cuda else (gpu.TINY, torch.float32, "cpu")
    started = time.perf_counter()
    model = gpu.random_llama(shape, len(tokenizer), dtype, device)
    res: dict[str, Any] = {"build_s": round(time.perf_counter() - started, 1)}
    placement = resolve(device=device, packed_linears=False)

    def backend(where: Placement = placement, **options: Any) -> HFBackend:
        return HFBackend.from_model(model, tokenizer_dir, where, name="random-llama", options=HFOptions(**options))

    def save() -> None:
        write_atomic(out, json.dumps(res, indent=1) + "\n")

    def timed(b: HFBackend, requests: list[Any]) -> dict[str, Any]:
        before = dict(b.usage())
        t = time.perf_counter()
        b.loglikelihood(requests)
        if cuda:
            torch.cuda.synchronize()
        used = {k: b.usage()[k] - before.get(k, 0) for k in ("forward_tokens", "padded_tokens", "head_positions")}
        return {"s": round(time.perf_counter() - t, 3), **used}

    requests = study_scale.blimp_pairs(4000 if cuda else 50)
    tree = backend(packing=False)  # the padded passes, named: the default has changed once already
    tree.loglikelihood(requests[:64])  # the kernels' first launches
    res["tokens_budget"] = placement.tokens("loglik", lambda: model)
    res["tree"] = timed(tree, requests)
    save()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    python = cProfile.Profile()
    with profile(activities=activities) as p:
        python.enable()
        tree.loglikelihood(requests[: len(requests) // 2])
        python.disable()
        if cuda:
            torch.cuda.synchronize()
    res["torch_profile_device"] = p.key_averages().table(
        sort_by="self_cuda_time_total" if cuda else "self_cpu_time_total", row_limit=18)
    res["torch_profile_cpu"] = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=18)
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(python, stream=text).sort_stats(order).print_stats(25)
        res[f"cprofile_{order}"] = text.getvalue()
    save()
    wide = replace(placement, max_batch=1024)
    levers = {"packed": backend(packing=True), "plain": backend(prefix_reuse=False, packing=False),
              "max_batch_1024": backend(wide, packing=False),
              "plain_max_batch_1024": backend(wide, prefix_reuse=False, packing=False)}
    for name, variant in levers.items():
        try:
            variant.loglikelihood(requests[:64])
            res[name] = timed(variant, requests)
        except Exception as e:  # noqa: BLE001 - a failing lever is a figure; the next one runs
            res[name] = f"{type(e).__name__}: {e}"[:300]
        save()
    lm_eval = gpu.lm_eval_available()
    if lm_eval:
        for batch in (64, 256):
            res[f"lm_eval_b{batch}_s"] = round(gpu.lm_eval_loglik(model, tokenizer, requests, batch, 1)[1], 3)
        save()
    theirs = ({"loglik": lambda rs: gpu.lm_eval_loglik(model, tokenizer, rs, 64, 1)[1],
               "generate": lambda ps, k: gpu.lm_eval_generate(model, tokenizer, ps, k, 1)} if lm_eval else None)
    size = study_scale.Scale(pairs=0, items=600, prompts=64, new_tokens=256) if cuda else study_scale.SMOKE
    n_params = sum(q.numel() for q in model.parameters())
    checks = study_scale.checks(tree, size, n_params, gpu.PEAK_TFLOPS["H200"] if cuda else None, theirs,
                                backend(kv_cache="static", packing=False), backend(packing=True))
    for name in ("study_choices", "study_long_generation"):
        t = time.perf_counter()
        try:
            res |= checks[name]()
        except Exception as e:  # noqa: BLE001 - as above
            res[name] = f"{type(e).__name__}: {e}"[:300]
        res[f"{name}_check_s"] = round(time.perf_counter() - t, 1)
        save()
    print(json.dumps({k: v for k, v in res.items() if "profile" not in k}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
