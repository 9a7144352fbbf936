"""The GPU check of the transformers backend: correctness on the device, and throughput. No download.

``python bench/gpu.py`` (``make bench-gpu``) on a machine with a CUDA GPU:

1. prefix tree against plain log-probs, on an 8B-shaped Llama (hidden 4096, 32 layers, 32/8
   heads, intermediate 14336) initialised at random in bf16 on the GPU, with SmolLM2's tokenizer
   (the embedded model's: nothing is downloaded);
2. GPU against CPU on a tiny random Llama in float32 (log-probs, greedy text);
3. continuous against fixed batching (same text);
4. constrained decoding (every answer in the choice set; needs xgrammar);
5. a ``device_map="auto"`` split of the tiny model across the GPU and the CPU (``max_memory``);
6. a forced out-of-memory back-off (a budget far above the card's memory: batches split and
   give the log-probs of the sized budget);
7. throughput: scored tokens/s (log-likelihood, prefix tree) and generated tokens/s, and the tokens
   run through the model per second (``forward``: a shared prefix once, padding not counted), each as
   a share of the card's bf16 peak (``--peak-tflops``, default from the card's name), against a
   plain transformers loop scoring the same requests as lm-eval's ``HFLM`` does (right-padded
   batches of 16, logits at every position, a log-softmax per request);
8. lm-eval's ``HFLM`` on the same in-memory model, where lm-eval is importable: ImperfectiveNLI
   zero-shot prompts × " True"/" False"/" Unknown" and ExpliCa's perplexity sentences (the better
   of batch 16 and 64), and generation against its ``generate_until``;
9. the same weights in float32 as the truth: log-prob gaps, decisions that flip in bf16 (lingdiag
   and lm-eval), and how many of lingdiag's decisions are marked fragile (``lingdiag.metrics.fragile``),
   with the flips outside them (which the noise bound should make zero), under the fixed bound and
   the bound ``lingdiag.models.hf.calibrate`` measures for these weights, dtype and device;
10. packed scoring (``packing``: no padding, one row per tree level) against the padded tree and plain
   paths: per-token gap, seconds of each, padding share.

Each check is guarded: one that fails records its one-line error under ``errors`` and the others
still run; the figures are written (atomically) after every check, so a crash keeps what passed.
``--cpu-smoke`` runs the tiny-model parts on the CPU (1, 3, 4, 6 with a simulated out-of-memory
error, 8 if lm-eval is importable, 9 on a bf16 copy, 10) in a few minutes: CI runs it
(``tests/test_bench_gpu.py``). Figures go to ``--out`` (JSON) and stdout; nothing is asserted on speed.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

import study_scale  # beside this script: run as `python bench/gpu.py`, bench/ is on sys.path
import torch

from lingdiag.io.atomic import write_atomic
from lingdiag.metrics.fragile import decide
from lingdiag.models.embedded import ensure_converted
from lingdiag.models.hf import HFBackend, HFOptions, calibrate
from lingdiag.models.hf.memory import small_device
from lingdiag.models.hf.placement import NOISE_PER_TOKEN, Placement, resolve
from lingdiag.records import Constraint, GenerationRequest, LogLikelihood, LoglikelihoodRequest

PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0}
"""Dense bf16 peak (TFLOP/s) by card name, from the vendors' data sheets (SXM parts)."""
EIGHT_B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336}
TINY = {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "intermediate_size": 256}


LABELS = (" True", " False", " Unknown")
"""The continuations of the ImperfectiveNLI log-likelihood workload."""


class Figures:
    """The figures by name, written atomically to ``out`` after every check; a failing check records its error."""

    def __init__(self, out: Path, **first: Any) -> None:
        """Start the file at ``out`` with ``first``."""
        self.out, self.data = out, dict(first)
        out.parent.mkdir(parents=True, exist_ok=True)
        self.write()

    def write(self) -> None:
        """The figures so far, replacing the file at once."""
        write_atomic(self.out, json.dumps(self.data, indent=2) + "\n")

    def guard(self, name: str, check: Callable[[], dict[str, Any] | None]) -> None:
        """Run ``check``; merge its figures, or record its error in one line under ``errors``; then write."""
        start = time.perf_counter()
        try:
            self.data |= check() or {}
        except Exception as e:  # noqa: BLE001 - every check's failure is a figure, and the next check runs
            first = str(e).splitlines()[0] if str(e) else ""
            self.data.setdefault("errors", {})[name] = f"{type(e).__name__}: {first}"
            print(f"bench/gpu.py: {name} failed: {type(e).__name__}: {first}", file=sys.stderr)
        # What each check cost, so a lease of a few minutes can be planned from the last run's file.
        self.data.setdefault("check_seconds", {})[name] = round(time.perf_counter() - start, 1)
        self.write()


def random_llama(shape: dict[str, int], vocab: int, dtype: torch.dtype, device: str, seed: int = 0) -> Any:
    """A Llama of ``shape`` with random weights, built directly on ``device`` in ``dtype``."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, max_position_embeddings=4096, tie_word_embeddings=False, **shape)
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, dtype=dtype).eval()


def workload(n_items: int) -> tuple[list[LoglikelihoodRequest], list[GenerationRequest]]:
    """ExpliCa's perplexity requests and ImperfectiveNLI zero-shot prompts, from the builtin items."""
    from lingdiag.suites.explica.data import builtin_items as explica_items
    from lingdiag.suites.explica.tasks import PerplexityTask
    from lingdiag.suites.imperfective.data import builtin_items as imperfective_items
    from lingdiag.suites.imperfective.prompts import strategy

    scored = [r for it in explica_items()[:n_items] for r in PerplexityTask().render(it)]
    prompt = strategy("zero-shot", max_new_tokens=16)
    generated = [prompt.render(it)[0] for it in imperfective_items()[:2 * n_items]]
    return scored, generated  # type: ignore[return-value]


def nli_requests(backend: HFBackend, prompts: Sequence[GenerationRequest]) -> list[LoglikelihoodRequest]:
    """Each prompt, rendered by the chat template, followed by each of ``LABELS``."""
    return [LoglikelihoodRequest(backend.render(p), label) for p in prompts for label in LABELS]


def choices(logprobs: Sequence[float], width: int) -> list[int]:
    """The argmax of each consecutive group of ``width`` log-probs (a label, a connective)."""
    return [max(range(width), key=lambda k: logprobs[i + k]) for i in range(0, len(logprobs), width)]


def fragile_and_flips(low: Sequence[LogLikelihood], truth: Sequence[LogLikelihood], width: int,
                      bound: float) -> dict[str, Any]:
    """Against float32: log-prob gaps, flipped decisions, fragile ones (under ``bound`` nats per token)
    and flips not marked."""
    flips = [a != b for a, b in zip(choices([x.logprob for x in low], width),
                                    choices([x.logprob for x in truth], width), strict=True)]

    def label(rs: Sequence[LogLikelihood]) -> str:
        return str(choices([r.logprob for r in rs], width)[0])

    marked = [bool((d := decide(label, low[i:i + width], bound)) and d.fragile)
              for i in range(0, len(low), width)]
    gaps = [abs(x.logprob - y.logprob) for x, y in zip(low, truth, strict=True)]
    return {"decisions": len(flips), "flips": sum(flips), "fragile": sum(marked),
            "flips_not_fragile": sum(f and not m for f, m in zip(flips, marked, strict=True)),
            "max_abs_gap": round(max(gaps), 4), "mean_abs_gap": round(sum(gaps) / len(gaps), 4)}


def per_token_gap(a: Sequence[Any], b: Sequence[Any]) -> dict[str, float]:
    """Largest per-token |Δ log-prob| and argmax agreement of two answer lists."""
    gap = max(abs(x.logprob - y.logprob) / x.n_tokens for x, y in zip(a, b, strict=True))
    agree = sum(x.is_greedy == y.is_greedy for x, y in zip(a, b, strict=True)) / len(a)
    return {"max_nat_per_token": round(gap, 6), "greedy_agreement": round(agree, 4)}


def counted(backend: HFBackend, run: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    """``run()`` and the backend's work during it (``forward_tokens``, ``padded_tokens``: see ``usage``)."""
    before = backend.usage()
    out = run()
    after = backend.usage()
    return out, {k: after[k] - before[k] for k in ("forward_tokens", "padded_tokens")}


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    """``run()`` and its wall seconds (device work included)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = run()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def plain_loop(model: Any, tokenizer: Any, requests: Sequence[LoglikelihoodRequest], batch: int = 16) -> list[float]:
    """Log-likelihoods as lm-eval's ``HFLM`` computes them: right-padded batches, logits everywhere."""
    device = model.get_input_embeddings().weight.device
    encoded = []
    for r in requests:
        ctx = tokenizer(r.context)["input_ids"] if r.context else [tokenizer.bos_token_id or tokenizer.eos_token_id]
        cont = tokenizer(r.continuation, add_special_tokens=False)["input_ids"]
        encoded.append((ctx + cont, len(cont)))
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i][0]))
    out = [0.0] * len(encoded)
    with torch.inference_mode():
        for k in range(0, len(order), batch):
            rows = order[k:k + batch]
            width = max(len(encoded[i][0]) - 1 for i in rows)
            ids = torch.tensor([encoded[i][0][:-1] + [0] * (width - len(encoded[i][0]) + 1) for i in rows],
                               device=device)
            logp = torch.log_softmax(model(input_ids=ids).logits.float(), dim=-1)
            for row, i in enumerate(rows):
                seq, n = encoded[i]
                target = torch.tensor(seq[-n:], device=device)
                out[i] = float(logp[row, len(seq) - 1 - n:len(seq) - 1].gather(1, target[:, None]).sum())
    return out


def best_of(run: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    """``run()``'s answers and its fastest wall seconds over ``repeats`` timed calls after a warm-up call
    (``repeats`` 0: the warm-up call's, for answers only)."""
    out, first = timed(run)
    return out, min((timed(run)[1] for _ in range(repeats)), default=first)


def lm_eval_available() -> bool:
    """Whether lm-eval's ``HFLM`` can be imported here."""
    from importlib.util import find_spec

    return find_spec("lm_eval") is not None


def lm_eval_loglik(model: Any, tokenizer: Any, requests: Sequence[LoglikelihoodRequest], batch: int | str,
                   repeats: int) -> tuple[list[LogLikelihood], float]:
    """lm-eval's ``HFLM`` on the in-memory ``model``: its answers (one token each: it reports no count) and seconds."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch)
    instances = [Instance("loglikelihood", {}, (r.context, r.continuation), i) for i, r in enumerate(requests)]
    answers, seconds = best_of(lambda: lm.loglikelihood(instances, disable_tqdm=True), repeats)
    return [LogLikelihood(logprob=float(lp), n_tokens=1, is_greedy=bool(g)) for lp, g in answers], seconds


def lm_eval_generate(model: Any, tokenizer: Any, prompts: Sequence[str], max_new: int, repeats: int,
                     batch: int | str = 64) -> float:
    """Seconds of lm-eval's ``generate_until`` (greedy, ``max_new`` tokens, at ``batch``) on ``prompts``."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch)
    kwargs = {"until": [], "max_gen_toks": max_new, "do_sample": False}
    instances = [Instance("generate_until", {}, (p, dict(kwargs)), i) for i, p in enumerate(prompts)]
    return best_of(lambda: lm.generate_until(instances, disable_tqdm=True), repeats)[1]


def check(cpu_smoke: bool, n_items: int, peak_tflops: float | None, out: Path,
          tokenizer_dir: str | None = None, study: study_scale.Scale | None = None,
          lease: bool = False) -> dict[str, Any]:
    """Every check this machine can run, each guarded; figures by name, written after each check. With
    ``lease``, the card's check of issue 63 instead (``--lease``): the measured peak and bandwidth first,
    then every workload beside ``HFLM`` at its best batch (``study_scale.lease_checks``), then the float32
    truth."""
    # A GPU machine with no package index has no weights package: the tokenizer files travel alone.
    tokenizer_dir = tokenizer_dir or str(ensure_converted("smollm2-135m")[0])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    vocab = len(tokenizer)
    scored, generated = workload(n_items)
    cuda = torch.cuda.is_available() and not cpu_smoke
    figures = Figures(out, device=torch.cuda.get_device_name() if cuda else "cpu", torch=torch.__version__)
    device = "cuda" if cuda else "cpu"
    shape, dtype = (EIGHT_B, torch.bfloat16) if cuda else (TINY, torch.float32)
    if lease:  # first, on a card nothing else has touched yet
        figures.guard("peak", lambda: {"peak_tflops": round(study_scale.matmul_peak(
            device, dtype, 8192 if cuda else 256, 10 if cuda else 1), 4)})
        figures.guard("bandwidth", lambda: {"bandwidth_gb_s": round(study_scale.copy_bandwidth(
            device, 4 << 30 if cuda else 64 << 20, 10 if cuda else 1) / 1e9, 1)})
    placement = resolve(device=device, packed_linears=False)
    repeats = 3 if cuda else 1

    def backend(model: Any, where: Placement = placement, **options: Any) -> HFBackend:
        return HFBackend.from_model(model, tokenizer_dir, where, name="random-llama", options=HFOptions(**options))

    model = random_llama(shape, vocab, dtype, device)
    n_params = sum(p.numel() for p in model.parameters())
    figures.data["model"] = {"params": n_params, "dtype": str(dtype).removeprefix("torch."), **shape}
    # Padded passes named, not left to the default: the packed twins below are compared with these.
    tree, plain = backend(model, packing=False), backend(model, prefix_reuse=False, packing=False)
    nli = nli_requests(tree, generated)
    state: dict[str, Any] = {}

    def tree_vs_plain() -> dict[str, Any]:
        # After a warm-up call that pays for the head check and the kernels' first launches.
        tree.loglikelihood(scored[:8])
        (ours, seconds), work = counted(tree, lambda: timed(lambda: tree.loglikelihood(scored)))
        state.update(ours=ours, seconds=seconds, n_scored=sum(a.n_tokens for a in ours))
        return {"tree_vs_plain": per_token_gap(ours, plain.loglikelihood(scored)),
                "scored_tokens_per_s": round(state["n_scored"] / seconds, 1),
                "loglik_forward_tokens_per_s": round(work["forward_tokens"] / seconds, 1),
                "loglik_padding_share": round(1 - work["forward_tokens"] / max(work["padded_tokens"], 1), 4)}

    def packing() -> dict[str, Any]:
        # Packed passes (no padding, one row per tree level) against the padded tree and plain paths.
        out: dict[str, Any] = {}
        for name, padded in (("tree", tree), ("plain", plain)):
            packed = backend(model, prefix_reuse=padded.options.prefix_reuse, packing=True)
            packed.loglikelihood(scored[:8])
            (answers, seconds), work = counted(packed, lambda p=packed: timed(lambda: p.loglikelihood(scored)))
            _, padded_seconds = timed(lambda p=padded: p.loglikelihood(scored))
            out[f"packed_{name}"] = per_token_gap(answers, padded.loglikelihood(scored)) | {
                "packed_s": round(seconds, 3), "padded_s": round(padded_seconds, 3),
                "speedup": round(padded_seconds / seconds, 2),
                "padding_share": round(1 - work["forward_tokens"] / max(work["padded_tokens"], 1), 4)}
        return out

    def batching() -> dict[str, Any]:
        (pooled, gen_seconds), work = counted(tree, lambda: timed(lambda: tree.generate(generated)))
        state["gen_seconds"] = gen_seconds
        fixed = backend(model, continuous_batching=False).generate(generated)
        return {"continuous_equals_fixed": [g.text for g in pooled] == [g.text for g in fixed],
                "generated_tokens_per_s": round(sum(g.n_tokens for g in pooled) / gen_seconds, 1),
                "generate_forward_tokens_per_s": round(work["forward_tokens"] / gen_seconds, 1)}

    def constrained() -> dict[str, Any] | None:
        from lingdiag.models.hf import constraints

        if not constraints.available():
            return None
        options = ("True", "False", "Unknown")
        asked = [replace(r, max_new_tokens=8, constraint=Constraint("choice", choices=options)) for r in generated]
        return {"constrained_in_choices": all(g.text in options for g in tree.generate(asked))}

    def back_off() -> dict[str, Any]:
        if cuda:
            huge = backend(model, replace(placement, batch_tokens=1 << 24))
            return {"oom_back_off": per_token_gap(state["ours"], huge.loglikelihood(scored))}
        with small_device(tree.model, 96) as refused:
            retried = tree.loglikelihood(scored)
        return {"oom_back_off": per_token_gap(state["ours"], retried) | {"refused_batches": len(refused)}}

    def against_plain_loop() -> dict[str, Any]:
        _, loop_seconds = timed(lambda: plain_loop(model, tokenizer, scored))
        out: dict[str, Any] = {"plain_loop_scored_tokens_per_s": round(state["n_scored"] / loop_seconds, 1),
                               "speedup_over_plain_loop": round(loop_seconds / state["seconds"], 2)}
        if cuda:
            name = torch.cuda.get_device_name()
            peak = peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
            if peak:
                for key in ("scored_tokens_per_s", "loglik_forward_tokens_per_s", "generated_tokens_per_s",
                            "generate_forward_tokens_per_s"):
                    if key in figures.data:
                        share = 2 * n_params * figures.data[key] / (peak * 1e12)
                        out[key.replace("_per_s", "_share_of_peak")] = round(share, 4)
            out["peak_gpu_mb"] = tree.usage().get("peak_gpu_mb")
        return out

    def against_lm_eval() -> dict[str, Any] | None:
        if not lm_eval_available():
            return {"lm_eval": "not importable here: skipped"}
        out: dict[str, Any] = {}
        for work, requests in (("nli", nli), ("sentences", scored)):
            _, ours = best_of(partial(tree.loglikelihood, requests), repeats)
            theirs = {b: lm_eval_loglik(model, tokenizer, requests, b, repeats)[1] for b in (16, 64)}
            out[f"lm_eval_{work}"] = {"requests": len(requests), "lingdiag_s": round(ours, 3),
                                      **{f"lm_eval_batch{b}_s": round(t, 3) for b, t in theirs.items()},
                                      "ratio": round(min(theirs.values()) / ours, 2)}
        _, ours_gen = best_of(lambda: tree.generate(generated), repeats)
        theirs_gen = lm_eval_generate(model, tokenizer, [tree.render(g) for g in generated],
                                      generated[0].max_new_tokens, repeats)
        out["lm_eval_generate"] = {"prompts": len(generated), "lingdiag_s": round(ours_gen, 3),
                                   "lm_eval_generate_until_s": round(theirs_gen, 3),
                                   "ratio": round(theirs_gen / ours_gen, 2)}
        return out

    def against_float32() -> dict[str, Any]:
        # The truth: the same weights in float32 (bf16 values are exact in float32). The CPU smoke's
        # float32 model is first rounded to bf16, which then are the weights compared.
        model.to(torch.bfloat16)
        low = replace(placement, dtype="bfloat16")
        answers = {"bf16": {w: backend(model, low).loglikelihood(r) for w, r in (("nli", nli), ("sentences", scored))}}
        theirs: dict[str, dict[str, list[LogLikelihood]]] = {}
        if lm_eval_available():
            theirs["bf16"] = {w: lm_eval_loglik(model, tokenizer, r, 64, 0)[0] for w, r in (("nli", nli),
                                                                                          ("sentences", scored))}
        model.float()
        high = replace(placement, dtype="float32")
        answers["fp32"] = {w: backend(model, high).loglikelihood(r) for w, r in (("nli", nli), ("sentences", scored))}
        if theirs:
            theirs["fp32"] = {w: lm_eval_loglik(model, tokenizer, r, 64, 0)[0] for w, r in (("nli", nli),
                                                                                           ("sentences", scored))}
        # The calibrated bound for these weights, dtype and device (``calibrate``), beside the fixed one.
        model.to(torch.bfloat16)
        lows = backend(model, low)
        twin = copy.deepcopy(model).float()
        calibration = calibrate.measure(lows.loglikelihood, backend(twin, high).loglikelihood)
        del twin
        # The model leaves this check in the dtype it came in: the study-scale checks time it next.
        model.to(dtype)
        out: dict[str, Any] = {"calibration": calibration.recorded()}
        bounds = {"fixed": NOISE_PER_TOKEN["bfloat16"], "calibrated": calibration.per_token}
        for work, width in (("nli", len(LABELS)), ("sentences", 4)):
            for kind, bound in bounds.items():
                out[f"bf16_vs_fp32_{work}_{kind}"] = fragile_and_flips(answers["bf16"][work], answers["fp32"][work],
                                                                       width, bound)
            if theirs:
                lm = fragile_and_flips(theirs["bf16"][work], theirs["fp32"][work], width, bounds["fixed"])
                out[f"lm_eval_bf16_vs_fp32_{work}"] = {k: v for k, v in lm.items() if "fragile" not in k}
        return out

    if lease:
        size = study or (study_scale.LEASE if cuda else study_scale.SMOKE)
        figures.data["study_scale"] = asdict(size)
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        theirs = {"loglik": lambda rs, b: lm_eval_loglik(model, tokenizer, rs, b, 0)[1],
                  "generate": lambda ps, n, b: lm_eval_generate(model, tokenizer, ps, n, 0, batch=b)}
        peak = figures.data.get("peak_tflops") or peak_tflops or 1.0
        bound = weights / (figures.data.get("bandwidth_gb_s", 1.0) * 1e9)
        for name, run in study_scale.lease_checks(tree, backend(model, packing=True), backend(model, kv_cache="static"),
                                                  plan_workloads(size, n_items, tree), 2 * n_params, peak, bound,
                                                  theirs if lm_eval_available() else None,
                                                  study_scale.hflm_batches(cuda)).items():
            figures.guard(name, run)
        figures.guard("float32_truth", against_float32)
        return figures.data
    for name, run in (("tree_vs_plain", tree_vs_plain), ("packing", packing), ("batching", batching),
                      ("constrained", constrained),
                      ("back_off", back_off), ("plain_loop", against_plain_loop), ("lm_eval", against_lm_eval),
                      ("float32_truth", against_float32)):
        figures.guard(name, run)
    peak = (peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in figures.data["device"]), None)
            if cuda else None)
    theirs = {"loglik": lambda rs: lm_eval_loglik(model, tokenizer, rs, 64, 1)[1],
              "generate": lambda ps, n: lm_eval_generate(model, tokenizer, ps, n, 1)}
    size = study or (study_scale.STUDY if cuda else study_scale.SMOKE)
    figures.data["study_scale"] = {"pairs": size.pairs, "items": size.items, "prompts": size.prompts,
                                   "new_tokens": size.new_tokens}
    for name, run in study_scale.checks(tree, size, n_params, peak,
                                        theirs if lm_eval_available() else None,
                                        backend(model, kv_cache="static"), backend(model, packing=True)).items():
        figures.guard(name, run)
    if cuda:
        del model, tree, plain
        torch.cuda.empty_cache()
        figures.guard("tiny_on_devices", lambda: tiny_on_devices(tokenizer_dir, vocab, scored[:40], generated[:8]))
    return figures.data


def tiny_on_devices(tokenizer_dir: str, vocab: int, scored: list[LoglikelihoodRequest],
                    generated: list[GenerationRequest]) -> dict[str, Any]:
    """2 and 5: the tiny float32 model on the CPU, on the GPU, and split across both."""
    answers = {}
    size = sum(p.numel() * 4 for p in random_llama(TINY, vocab, torch.float32, "cpu").parameters())
    placements = {"cpu": resolve(packed_linears=False), "cuda": resolve(device="cuda", dtype="float32"),
                  "split": replace(resolve(device="cuda", dtype="float32"), device_map="auto",
                                   max_memory=(("0", f"{int(size * 0.99) >> 10}KiB"), ("cpu", "8GiB")))}
    for name, placement in placements.items():
        model = random_llama(TINY, vocab, torch.float32, "cpu")
        if placement.device_map == "auto":
            from accelerate import dispatch_model, infer_auto_device_map

            device_map = infer_auto_device_map(model, max_memory=dict(placement.load_kwargs()["max_memory"]))
            model = dispatch_model(model, device_map=device_map)
            answers["split_devices"] = sorted({str(d) for d in device_map.values()})
        else:
            model = model.to(placement.kind)
        backend = HFBackend.from_model(model, tokenizer_dir, placement, name=f"tiny-{name}")
        answers[name] = (backend.loglikelihood(scored), backend.generate(generated))
    out: dict[str, Any] = {"split_devices": answers.pop("split_devices", None)}
    for name in ("cuda", "split"):
        out[f"cpu_vs_{name}"] = per_token_gap(answers["cpu"][0], answers[name][0]) | {
            "same_text": [g.text for g in answers["cpu"][1]] == [g.text for g in answers[name][1]]}
    return out


H200_BYTES = 143_771 << 20
"""The H200's memory (143,771 MiB, as ``nvidia-smi`` gave it on 2026-11-28): the card ``--plan-only`` plans for."""


def plan_workloads(size: study_scale.Scale, n_items: int, backend: HFBackend,
                   ) -> dict[str, list[LoglikelihoodRequest] | list[GenerationRequest]]:
    """The scored and generated workloads of the card's check, by name, as ``--lease`` runs them."""
    scored, generated = workload(n_items)
    return {"study_blimp": study_scale.blimp_pairs(size.pairs), "study_choices": study_scale.prompt_choices(size.items),
            "study_long_generation": study_scale.long_prompts(size.prompts, size.new_tokens),
            "nli": nli_requests(backend, generated), "sentences": scored}


def plan_only(tokenizer_dir: str | None, size: study_scale.Scale, n_items: int, card_bytes: int,
              out: Path) -> dict[str, Any]:
    """The work each workload plans at the 8B shape on a card of ``card_bytes`` (no card, no weights: the
    tokenizer and ``workplan``): the padded plan of today's default, the plan the work model chooses, and
    packing to the memory budget under a dense mask (what ran on the H200 on 2026-11-28), each with
    ``planned_flops``, ``useful_flops`` and ``planned_over_useful``; the chosen plan's at the top of each."""
    from transformers import LlamaConfig

    from lingdiag.models.hf import workplan
    from lingdiag.models.hf.batching import Budget
    from lingdiag.models.hf.checkpoint import Checkpoint
    from lingdiag.models.hf.placement import Machine
    from lingdiag.models.hf.score import scoring_view
    from lingdiag.models.hf.tokens import split_requests

    tokenizer_dir = tokenizer_dir or str(ensure_converted("smollm2-135m")[0])
    placement = resolve(device="cuda", machine=Machine(cpus=16, cuda_devices=1, cuda_bf16=True))
    backend = HFBackend(Checkpoint(tokenizer_dir, name="random-llama"), HFOptions(), placement)  # loads no weights
    vocab = len(backend.tokenizer)
    config = LlamaConfig(vocab_size=vocab, tie_word_embeddings=False, **EIGHT_B)
    shape = workplan.Shape.of(config)
    weights = 2 * (shape.weights + vocab * shape.hidden)  # bf16, the input embeddings too
    free = card_bytes - weights
    tokens = {kind: placement.sized(kind, free, config, 2, vocab) for kind in ("loglik", "generate")}
    figures = Figures(out, device=f"plan only: 8B shape on {card_bytes >> 20} MiB", shape=asdict(shape),
                      budget_tokens=tokens, study_scale=asdict(size))
    pass_tokens = placement.call_tokens or workplan.WEIGHT_READ_TOKENS

    def scored_plans(requests: list[LoglikelihoodRequest]) -> dict[str, Any]:
        view = scoring_view(split_requests(backend.loaded, requests))
        useful = workplan.useful_flops(shape, view)
        budget = Budget(tokens["loglik"], placement.max_batch, True, call_tokens=placement.call_tokens,
                        packed=tokens["loglik"], choose_padded=True)
        chosen = workplan.choose(shape, view, budget, attention=placement.packed_attention, pass_tokens=pass_tokens)
        groups = workplan.shared(view, budget)
        plans = {"default": workplan.tree(view, replace(budget, packed=None), groups), "chosen": chosen,
                 "packed_dense_to_budget": workplan.packed_plan(view, budget, share=True, attention="dense",
                                                                tree_groups=groups)}
        out = {name: plan.figures(shape, useful) for name, plan in plans.items()}
        return {k: out["chosen"][k] for k in ("planned_flops", "useful_flops", "planned_over_useful")} | out

    def generated_plans(requests: list[GenerationRequest]) -> dict[str, Any]:
        prompts = [len(backend.loaded.encode_prompt(r)) for r in requests]
        new = requests[0].max_new_tokens
        plan = workplan.generation(prompts, new, Budget(tokens["generate"], placement.max_batch, True))
        out = plan.figures(shape, workplan.useful_generation_flops(shape, prompts, new))
        return {k: out[k] for k in ("planned_flops", "useful_flops", "planned_over_useful")} | {"chosen": out}

    for name, requests in plan_workloads(size, n_items, backend).items():
        run = generated_plans if name == "study_long_generation" else scored_plans
        figures.guard(name, lambda run=run, name=name, requests=requests: {name: run(requests)})  # type: ignore[misc]
    return figures.data


def main(argv: Sequence[str] | None = None) -> None:
    """Run the checks and write their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="the tiny-model parts on the CPU (CI)")
    parser.add_argument("--items", type=int, default=None, help="items per workload (default 200; smoke 6)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the card's dense bf16 peak")
    parser.add_argument("--out", type=Path, default=Path("bench/.work/gpu.json"))
    parser.add_argument("--tokenizer", default=None,
                        help="a directory of SmolLM2's tokenizer files (default: the embedded model's)")
    parser.add_argument("--study", type=int, nargs=4, metavar=("PAIRS", "ITEMS", "PROMPTS", "NEW_TOKENS"),
                        help="the study-scale workloads' sizes (default 67000 10000 256 2048 on a GPU): "
                             "smaller ones fit a short lease")
    parser.add_argument("--lease", action="store_true",
                        help="the card's check of issue 63 in one command of under 8 minutes: the measured peak, "
                             "every workload beside HFLM at its best batch, the float32 truth "
                             "(with --cpu-smoke: the same on the tiny model on the CPU)")
    parser.add_argument("--plan-only", action="store_true",
                        help="no card, no weights: the work each workload plans at the 8B shape (workplan)")
    parser.add_argument("--card-mib", type=int, default=H200_BYTES >> 20,
                        help="--plan-only: the card's memory in MiB (default an H200's)")
    args = parser.parse_args(argv)
    size = study_scale.Scale(*args.study) if args.study else None
    if args.plan_only:
        print(json.dumps(plan_only(args.tokenizer, size or study_scale.STUDY, args.items or 200, args.card_mib << 20,
                                   args.out), indent=2))
        return
    if not args.cpu_smoke and not torch.cuda.is_available():
        sys.exit("bench/gpu.py: no CUDA device here (run with --cpu-smoke for the CPU parts)")
    figures = check(args.cpu_smoke, args.items or (6 if args.cpu_smoke else 200), args.peak_tflops, args.out,
                    args.tokenizer, size, lease=args.lease)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
