"""Study-scale workloads for ``bench/gpu.py`` (issue 48): the shapes of a real study, not its data.

- ``blimp``: BLiMP-sized minimal pairs (67k pairs on the GPU), each pair's two token lengths drawn from
  ``blimp_lengths.json`` (SmolLM2 token lengths of the shipped BLiMP paradigms: a length table, not the
  sentences), texts of that many words;
- ``choices``: 10k prompt + choices items (a 40-200 word prompt, four 1-6 word continuations);
- ``long_generation``: 256 prompts, greedy to 2,048 new tokens (no stop string: a random model's traces
  run to the budget).

Each reports forward tokens/s (``usage``'s ``forward_tokens``) and, given the card's peak, the share of
it; beside lm-eval's ``HFLM`` on the same in-memory model where lm-eval is importable. The texts are
seeded words, so a workload is the same on every machine.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lingdiag.models.hf import HFBackend
from lingdiag.records import GenerationRequest, LoglikelihoodRequest

LENGTHS = Path(__file__).with_name("blimp_lengths.json")
WORDS = ("the", "a", "cat", "dog", "house", "river", "green", "ran", "saw", "under", "because", "every",
         "teacher", "wrote", "quickly", "old", "town", "bread", "light", "never")


@dataclass(frozen=True, slots=True)
class Scale:
    """How big each workload is: the study's sizes on a GPU, a few items on the CPU smoke."""

    pairs: int
    items: int
    prompts: int
    new_tokens: int


STUDY = Scale(pairs=67_000, items=10_000, prompts=256, new_tokens=2048)
SMOKE = Scale(pairs=4, items=4, prompts=2, new_tokens=16)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(max(n, 1))).capitalize() + "."


def blimp_pairs(n_pairs: int, seed: int = 0) -> list[LoglikelihoodRequest]:
    """Two whole-sentence requests per pair, lengths drawn from the BLiMP length table."""
    table = json.loads(LENGTHS.read_text(encoding="utf-8"))["counts"]
    cells = [tuple(int(x) for x in key.split(",")) for key in table]
    rng = random.Random(seed)
    return [LoglikelihoodRequest("", _text(rng, n)) for pair in rng.choices(cells, list(table.values()), k=n_pairs)
            for n in pair]


def prompt_choices(n_items: int, seed: int = 1) -> list[LoglikelihoodRequest]:
    """Four continuations after one prompt per item (a shared prefix: what the prefix tree is for)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_items):
        prompt = _text(rng, rng.randint(40, 200))
        out += [LoglikelihoodRequest(prompt, " " + _text(rng, rng.randint(1, 6))) for _ in range(4)]
    return out


def long_prompts(n: int, new_tokens: int, seed: int = 2) -> list[GenerationRequest]:
    """Raw prompts of 20-100 words, each generated greedily to ``new_tokens``."""
    rng = random.Random(seed)
    return [GenerationRequest(prompt=_text(rng, rng.randint(20, 100)), max_new_tokens=new_tokens) for _ in range(n)]


def rate(backend: HFBackend, run: Any, n_params: int, peak: float | None) -> dict[str, Any]:
    """``run()`` timed, with the backend's forward tokens/s and their share of ``peak`` TFLOP/s."""
    before = backend.usage()["forward_tokens"]
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    tokens = backend.usage()["forward_tokens"] - before
    out: dict[str, Any] = {"seconds": round(seconds, 3), "forward_tokens": tokens,
                           "forward_tokens_per_s": round(tokens / seconds, 1)}
    if peak:
        out["share_of_peak"] = round(2 * n_params * tokens / seconds / (peak * 1e12), 4)
    return out


def checks(backend: HFBackend, size: Scale, n_params: int, peak: float | None,
           theirs: dict[str, Callable[..., Any]] | None,
           static: HFBackend | None = None, packed: HFBackend | None = None,
           ) -> dict[str, Callable[[], dict[str, Any]]]:
    """One guarded check per workload: ours timed, lm-eval's seconds beside it (``theirs``: its log-likelihood
    and generation runners, None where lm-eval is not importable); long generation also with ``static``, the
    same model with ``kv_cache=static``, whose answers are compared with the dynamic cache's; the scored workloads also
    with ``packed``, the same model with ``packing=True`` (seconds, and its largest gap per token)."""

    def scored(name: str, requests: list[LoglikelihoodRequest]) -> dict[str, Any]:
        answers: list[Any] = []
        ours = rate(backend, lambda: answers.extend(backend.loglikelihood(requests)), n_params, peak)
        out: dict[str, Any] = {"requests": len(requests)} | ours
        if packed is not None:
            rows: list[Any] = []
            fast = rate(packed, lambda: rows.extend(packed.loglikelihood(requests)), n_params, peak)
            gap = max((abs(a.logprob - b.logprob) / max(a.n_tokens, 1) for a, b in zip(answers, rows, strict=True)),
                      default=0.0)
            out |= {"packed_seconds": fast["seconds"], "packed_speedup": round(ours["seconds"] / fast["seconds"], 2),
                    "packed_max_gap_per_token": round(gap, 5)}
        if theirs:
            out["lm_eval_seconds"] = round(theirs["loglik"](requests), 3)
            out["speedup_over_lm_eval"] = round(out["lm_eval_seconds"] / ours["seconds"], 2)
        return {f"study_{name}": out}

    def generation() -> dict[str, Any]:
        prompts = long_prompts(size.prompts, size.new_tokens)
        answers: list[Any] = []
        ours = rate(backend, lambda: answers.extend(backend.generate(prompts)), n_params, peak)
        out: dict[str, Any] = {"prompts": len(prompts), "generated_tokens": sum(g.n_tokens for g in answers)} | ours
        if theirs:
            out["lm_eval_seconds"] = round(theirs["generate"]([p.prompt or "" for p in prompts], size.new_tokens), 3)
            out["speedup_over_lm_eval"] = round(out["lm_eval_seconds"] / ours["seconds"], 2)
        if static is not None:
            fixed: list[Any] = []
            slots = rate(static, lambda: fixed.extend(static.generate(prompts)), n_params, peak)
            out |= {"static_seconds": slots["seconds"],
                    "static_over_dynamic": round(ours["seconds"] / slots["seconds"], 2),
                    "static_equals_dynamic": [g.text for g in fixed] == [g.text for g in answers]}
        return {"study_long_generation": out}

    return {"study_blimp": lambda: scored("blimp", blimp_pairs(size.pairs)),
            "study_choices": lambda: scored("choices", prompt_choices(size.items)),
            "study_long_generation": generation}


LEASE = Scale(pairs=4000, items=600, prompts=64, new_tokens=256)
"""``bench/gpu.py --lease``'s sizes: every workload, with ``HFLM`` at three batch sizes beside it, in under
8 minutes on an H200 (the 2026-11-28 lease timed 4,000 pairs at 5.8-12 s a run, 600 items at 10-15 s and
64 × 256 tokens at 10-24 s)."""

HFLM_BATCHES: tuple[int | str, ...] = (64, 256, "auto")
"""The batch sizes ``HFLM`` is timed at on a card; its best is the one compared (issue 63)."""


def hflm_batches(cuda: bool) -> tuple[int | str, ...]:
    """:data:`HFLM_BATCHES` on a card; without ``auto`` on the CPU. ``auto`` searches down from a batch of
    the model's whole context by catching CUDA's out-of-memory error, which a CPU never raises: there the
    first try (64 × the context × the vocabulary in float32 logits, 24 GiB on the tiny Llama) grows until
    the kernel kills the process."""
    return HFLM_BATCHES if cuda else tuple(b for b in HFLM_BATCHES if b != "auto")


def matmul_peak(device: str, dtype: Any, n: int, repeats: int) -> float:
    """TFLOP/s of an ``n``³ matrix product in ``dtype`` on ``device``, best of ``repeats`` after a warm-up."""
    import torch

    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    best = float("inf")
    for k in range(repeats + 1):
        if device != "cpu":
            torch.cuda.synchronize()
        start = time.perf_counter()
        a @ b
        if device != "cpu":
            torch.cuda.synchronize()
        if k:  # the first is the warm-up
            best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e12


def copy_bandwidth(device: str, nbytes: int, repeats: int) -> float:
    """Bytes/s a copy of ``nbytes`` on ``device`` reads and writes, best of ``repeats`` after a warm-up."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    best = float("inf")
    for k in range(repeats + 1):
        if device != "cpu":
            torch.cuda.synchronize()
        start = time.perf_counter()
        dst.copy_(src)
        if device != "cpu":
            torch.cuda.synchronize()
        if k:
            best = min(best, time.perf_counter() - start)
    return 2 * nbytes / best


def decode_steps(backend: HFBackend, prompts: list[GenerationRequest]) -> int:
    """Decoding steps of ``prompts`` in the work model's batches (``workplan.generation``: each answer runs
    to its budget)."""
    from lingdiag.models.hf import workplan
    from lingdiag.models.hf.batching import Budget

    lengths = [len(backend.loaded.encode_prompt(p)) for p in prompts]
    budget = Budget(backend.placement.tokens("generate", lambda: backend.model), backend.placement.max_batch, True)
    return sum(p.width == 1 for p in workplan.generation(lengths, prompts[0].max_new_tokens, budget).passes)


def lease_checks(padded: HFBackend, packed: HFBackend, static: HFBackend, workloads: dict[str, list[Any]],
                 flops_per_token: int, peak: float, step_bound: float,
                 theirs: dict[str, Callable[..., float]] | None,
                 hflm: tuple[int | str, ...] = HFLM_BATCHES) -> dict[str, Callable[[], dict[str, Any]]]:
    """One guarded check per workload of ``--lease``: lingdiag padded (the default) and packed (the work
    model's passes), each timed once after a warm-up on a few requests, forward tokens/s as a share of the
    measured ``peak`` TFLOP/s (``flops_per_token``: 2 × the parameters), the work model's plan; beside
    ``HFLM`` (always padded) at each of the ``hflm`` batch sizes and its best. Generation: the dynamic and static
    caches, seconds per decoding step against ``step_bound`` (the weights read once at the measured bandwidth).
    """

    def share(tokens: int, seconds: float) -> float:
        return round(flops_per_token * tokens / seconds / (peak * 1e12), 4)

    def beside(out: dict[str, Any], run: Callable[[int | str], float]) -> dict[str, Any]:
        seconds = {str(b): round(run(b), 3) for b in hflm}
        best = min(seconds, key=lambda b: seconds[b])
        out["hflm_padded_seconds"] = seconds
        out["hflm_best_batch"] = best
        for side in ("padded", "packed", "static", "dynamic"):
            if f"{side}_seconds" in out:
                out[f"{side}_over_hflm_best"] = round(seconds[best] / out[f"{side}_seconds"], 2)
        return out

    def scored(name: str, requests: list[LoglikelihoodRequest]) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": len(requests)}
        answers = {}
        for side, backend in (("padded", padded), ("packed", packed)):
            backend.loglikelihood(requests[:8])
            before = backend.usage()
            start = time.perf_counter()
            answers[side] = backend.loglikelihood(requests)
            seconds = time.perf_counter() - start
            work = {k: v - before.get(k, 0) for k, v in backend.usage().items()}
            out |= {f"{side}_seconds": round(seconds, 3), f"{side}_forward_tokens": work["forward_tokens"],
                    f"{side}_share_of_peak": share(work["forward_tokens"], seconds),
                    f"{side}_padding_share": round(1 - work["forward_tokens"] / max(work["padded_tokens"], 1), 4)}
            out |= {f"{side}_{k}": v for k, v in work.items() if k.startswith("plan_") and v}
        out["packed_max_gap_per_token"] = round(max(abs(a.logprob - b.logprob) / max(a.n_tokens, 1)
                                                    for a, b in zip(answers["padded"], answers["packed"],
                                                                    strict=True)), 5)
        return {name: beside(out, lambda b: theirs["loglik"](requests, b)) if theirs else out}

    def generation(prompts: list[GenerationRequest]) -> dict[str, Any]:
        out: dict[str, Any] = {"prompts": len(prompts), "new_tokens": prompts[0].max_new_tokens,
                               "step_bound_seconds": round(step_bound, 5)}
        texts = {}
        for side, backend in (("dynamic", padded), ("static", static)):
            before = backend.usage()["forward_tokens"]
            start = time.perf_counter()
            answers = backend.generate(prompts)
            seconds = time.perf_counter() - start
            texts[side] = [g.text for g in answers]
            tokens = backend.usage()["forward_tokens"] - before
            steps = decode_steps(backend, prompts)
            out |= {f"{side}_seconds": round(seconds, 3), f"{side}_share_of_peak": share(tokens, seconds),
                    f"{side}_step_over_bound": round(seconds / steps / step_bound, 2)}
        out["static_equals_dynamic"] = texts["static"] == texts["dynamic"]
        raw = [p.prompt or "" for p in prompts]
        return {"study_long_generation": beside(out, lambda b: theirs["generate"](raw, prompts[0].max_new_tokens, b))
                if theirs else out}

    return {name: partial(generation, requests) if name == "study_long_generation" else partial(scored, name, requests)
            for name, requests in workloads.items()}
