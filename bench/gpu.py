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
7. throughput: scored tokens/s (log-likelihood, prefix tree) and generated tokens/s, each as a
   share of the card's bf16 peak (``--peak-tflops``, default from the card's name), against a
   plain transformers loop scoring the same requests as lm-eval's ``HFLM`` does (right-padded
   batches of 16, logits at every position, a log-softmax per request).

``--cpu-smoke`` runs the tiny-model parts on the CPU (1, 3, 4, 6 with a simulated out-of-memory
error) in about a minute: CI runs it (``tests/test_bench_gpu.py``). Figures go to ``--out``
(JSON) and stdout; nothing is asserted on speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from lingdiag.models.embedded import ensure_converted
from lingdiag.models.hf import HFBackend
from lingdiag.models.hf.memory import small_device
from lingdiag.models.hf.placement import Placement, resolve
from lingdiag.records import Constraint, GenerationRequest, LoglikelihoodRequest

PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0}
"""Dense bf16 peak (TFLOP/s) by card name, from the vendors' data sheets (SXM parts)."""
EIGHT_B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336}
TINY = {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "intermediate_size": 256}


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
    generated = [prompt.render(it)[0] for it in imperfective_items()[:n_items]]
    return scored, generated  # type: ignore[return-value]


def per_token_gap(a: Sequence[Any], b: Sequence[Any]) -> dict[str, float]:
    """Largest per-token |Δ log-prob| and argmax agreement of two answer lists."""
    gap = max(abs(x.logprob - y.logprob) / x.n_tokens for x, y in zip(a, b, strict=True))
    agree = sum(x.is_greedy == y.is_greedy for x, y in zip(a, b, strict=True)) / len(a)
    return {"max_nat_per_token": round(gap, 6), "greedy_agreement": round(agree, 4)}


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


def check(cpu_smoke: bool, n_items: int, peak_tflops: float | None) -> dict[str, Any]:
    """Every check this machine can run; figures by name."""
    tokenizer_dir = str(ensure_converted("smollm2-135m")[0])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    vocab = len(tokenizer)
    scored, generated = workload(n_items)
    cuda = torch.cuda.is_available() and not cpu_smoke
    figures: dict[str, Any] = {"device": torch.cuda.get_device_name() if cuda else "cpu",
                               "torch": torch.__version__}
    device = "cuda" if cuda else "cpu"
    shape, dtype = (EIGHT_B, torch.bfloat16) if cuda else (TINY, torch.float32)
    placement = resolve(device=device, packed_linears=False)

    def backend(model: Any, where: Placement = placement, **options: Any) -> HFBackend:
        return HFBackend.from_model(model, tokenizer_dir, where, name="random-llama", **options)

    model = random_llama(shape, vocab, dtype, device)
    n_params = sum(p.numel() for p in model.parameters())
    figures["model"] = {"params": n_params, "dtype": str(dtype).removeprefix("torch."), **shape}
    tree, plain = backend(model), backend(model, prefix_reuse=False)

    # 1. Prefix tree against plain log-probs (and the throughput of scoring, after a warm-up call
    # that pays for the head check and the kernels' first launches).
    tree.loglikelihood(scored[:8])
    ours, seconds = timed(lambda: tree.loglikelihood(scored))
    figures["tree_vs_plain"] = per_token_gap(ours, plain.loglikelihood(scored))
    n_scored = sum(a.n_tokens for a in ours)
    figures["scored_tokens_per_s"] = round(n_scored / seconds, 1)
    # 3. Continuous against fixed batching.
    pooled, gen_seconds = timed(lambda: tree.generate(generated))
    fixed = backend(model, continuous_batching=False).generate(generated)
    figures["continuous_equals_fixed"] = [g.text for g in pooled] == [g.text for g in fixed]
    figures["generated_tokens_per_s"] = round(sum(g.n_tokens for g in pooled) / gen_seconds, 1)
    # 4. Constrained decoding.
    from lingdiag.models.hf import constraints

    if constraints.available():
        choices = ("True", "False", "Unknown")
        constraint = Constraint("choice", choices=choices)
        constrained = [replace(r, max_new_tokens=8, constraint=constraint) for r in generated]
        figures["constrained_in_choices"] = all(g.text in choices for g in tree.generate(constrained))
    # 6. Out-of-memory back-off.
    if cuda:
        huge = backend(model, replace(placement, batch_tokens=1 << 24))
        figures["oom_back_off"] = per_token_gap(ours, huge.loglikelihood(scored))
    else:
        with small_device(tree.model, 96) as refused:
            retried = tree.loglikelihood(scored)
        figures["oom_back_off"] = per_token_gap(ours, retried) | {"refused_batches": len(refused)}
    # Throughput against a plain transformers loop, as lm-eval scores.
    _, loop_seconds = timed(lambda: plain_loop(model, tokenizer, scored))
    figures["plain_loop_scored_tokens_per_s"] = round(n_scored / loop_seconds, 1)
    figures["speedup_over_plain_loop"] = round(loop_seconds / seconds, 2)
    if cuda:
        name = torch.cuda.get_device_name()
        peak = peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
        if peak:
            for key in ("scored_tokens_per_s", "generated_tokens_per_s"):
                figures[key.replace("_per_s", "_share_of_peak")] = round(2 * n_params * figures[key] / (peak * 1e12), 4)
        figures["peak_gpu_mb"] = tree.usage().get("peak_gpu_mb")
        del model, tree, plain
        torch.cuda.empty_cache()
        figures |= tiny_on_devices(tokenizer_dir, vocab, scored[:40], generated[:8])
    return figures


def tiny_on_devices(tokenizer_dir: str, vocab: int, scored: list[LoglikelihoodRequest],
                    generated: list[GenerationRequest]) -> dict[str, Any]:
    """2 and 5: the tiny float32 model on the CPU, on the GPU, and split across both."""
    answers = {}
    size = sum(p.numel() * 4 for p in random_llama(TINY, vocab, torch.float32, "cpu").parameters())
    placements = {"cpu": resolve(packed_linears=False), "cuda": resolve(device="cuda", dtype="float32"),
                  "split": replace(resolve(device="cuda", dtype="float32"), device_map="auto",
                                   max_memory=(("0", str(size // 2)), ("cpu", "8GiB")))}
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


def main(argv: Sequence[str] | None = None) -> None:
    """Run the checks and write their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="the tiny-model parts on the CPU (CI)")
    parser.add_argument("--items", type=int, default=None, help="items per workload (default 200; smoke 6)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the card's dense bf16 peak")
    parser.add_argument("--out", type=Path, default=Path("bench/.work/gpu.json"))
    args = parser.parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        sys.exit("bench/gpu.py: no CUDA device here (run with --cpu-smoke for the CPU parts)")
    figures = check(args.cpu_smoke, args.items or (6 if args.cpu_smoke else 200), args.peak_tflops)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(f".{args.out.name}.{time.time_ns()}.tmp")
    tmp.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
