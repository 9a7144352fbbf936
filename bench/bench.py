"""lingdiag against lm-evaluation-harness: same work, same model, same machine, one command.

Run by ``bash bench/run.sh`` (``make bench``), which installs lm-eval into its own venv.
Both tools load SmolLM2-135M-Instruct converted to a plain transformers directory
(``ensure_converted``), in float32 on the CPU with 2 torch threads, each in a fresh
subprocess (so each peak RSS is its own), and only the request phase is timed:

1. ExpliCa perplexity pass: 1,200 ordered pairs × 4 connectives = 4,800 log-likelihood
   requests with an empty context. The sentences are joined by the ExpliCa suite
   (``lingdiag.suites.explica.data.join``: first sentence without its final period, ", ",
   the connective, the second sentence with its first letter lowercased unless it is a
   proper noun). Decision per pair: the connective with the lowest per-token perplexity.
2. ImperfectiveNLI zero-shot generation on the 400 official items: chat template, greedy,
   16 new tokens. Decision per item: the label lingdiag's parser reads from the text.
3. ``lingdiag run`` of (2) cold (empty response cache) against a re-run from the cache,
   wall time of the whole command.
4. Chain of thought: 100 ImperfectiveNLI items with the CoT prompt, greedy, 160 new tokens,
   against lm-eval and against lingdiag's fixed batches (continuous batching off).
5. The half types, ``--dtype bfloat16`` and ``--dtype bfloat16-mixed``: (1) and (2) in full on
   a CPU with native bf16 dot products (AVX512-BF16, AMX), else on a sample (``BF16_PAIRS``
   pairs, ``BF16_ITEMS`` items), timed against float32 on the same work; decisions compared
   with float32 lingdiag and with float32 lm-eval, per suite.

It also measures a float32 matmul rate and prints the compute floor of (1): model FLOPs
per token × tokens ÷ that rate, both for all tokens (2N per token, as the issue's table)
and for the work lingdiag actually does (the transformer body on tokens not shared with
another request, the LM head only on scored positions).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "bench" / ".work"
SHARED = ROOT.parent / "shared" / "datasets"
MAX_NEW_TOKENS = 16
THREADS = 2
SMALL_GEN_BUDGET = 2048
"""A generation budget whose batches hold about as many rows (~19) as lm-eval's 16."""
COT_ITEMS, COT_NEW_TOKENS = 100, 160
BF16_PAIRS, BF16_ITEMS = 100, 100
"""The half-type sample on a CPU without native bf16 dot products: there bf16 runs several
times slower than float32, and the sample keeps ``make bench`` within minutes."""
HALF_TYPES = ("bfloat16", "bfloat16-mixed")


@dataclass(frozen=True)
class HalfRun:
    """One half type's passes (1) and (2) against float32 lingdiag and float32 lm-eval."""

    ll: dict[str, Any]
    """The worker's result of (1)."""
    gen: dict[str, Any]
    """The worker's result of (2)."""
    ll_speedup: float
    gen_speedup: float
    pairs_f32: float
    """Share of ExpliCa decisions equal to float32 lingdiag's (``pairs_ref``: to lm-eval's)."""
    pairs_ref: float
    items_f32: float
    """Share of ImperfectiveNLI labels equal to float32 lingdiag's (``items_ref``: to lm-eval's)."""
    items_ref: float
    maxdiff: float
    """Largest |log-prob| difference from float32 lingdiag in (1)."""

    @property
    def agreement(self) -> float:
        """The rule for a default other than float32: ≥ 99.5% of decisions on both suites."""
        return min(self.pairs_f32, self.items_f32)


def native_bf16() -> bool:
    """Whether this CPU has bf16 dot-product instructions (AVX512-BF16 or AMX), from /proc/cpuinfo."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text(encoding="utf-8").split())
    except OSError:
        return False
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def data_path(suite: str, shared_file: str) -> Path:
    """The official file from ``../shared/datasets``, else lingdiag's verified fetch cache."""
    from lingdiag.io.fetch import OFFICIAL, official_path
    from lingdiag.registry import load_plugins

    if (SHARED / shared_file).exists():
        return SHARED / shared_file
    load_plugins()
    return official_path(suite, OFFICIAL[suite][0].local)


def matmul_rate(seconds: float = 3.0) -> float:
    """Best float32 GEMM rate (FLOP/s) of 2048² matrices on ``THREADS`` threads."""
    import torch

    torch.set_num_threads(THREADS)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    best, end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        a @ b
        best = max(best, 2 * 2048**3 / (time.perf_counter() - t))
    return best


def gemm_seconds(m: int, k: int, n: int, dtype: str, reps: int = 5) -> float:
    """Best time of ``[m, k] @ [k, n]`` in ``dtype`` on ``THREADS`` threads."""
    import torch

    torch.set_num_threads(THREADS)
    a, b = torch.randn(m, k).to(getattr(torch, dtype)), torch.randn(k, n).to(getattr(torch, dtype))
    return best_seconds(lambda: a @ b, reps)


def best_seconds(run: Any, reps: int) -> float:
    """Best wall time of ``run()`` over ``reps`` calls, after one warm-up call."""
    run()
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


def levers(hidden: int, kv: int, inter: int, vocab: int, heads: int, rows: int = 4096) -> list[str]:
    """Kernel-level measurements behind the choices in bench/README.md ("Levers weighed").

    The half types against float32 at this model's projection shapes, fused against
    separate projections (one [hidden, q + 2 kv] product instead of three; gate and up as
    one [hidden, 2 inter] product), all on ``rows`` tokens, oneDNN on packed weights
    against torch's default float32 kernel, on a projection and on the LM head, the gated
    MLP with its activation and product as oneDNN post-ops, and grouped-query attention.
    """
    lines = []
    f32 = gemm_seconds(rows, hidden, inter, "float32")
    for dtype in ("bfloat16", "float16"):
        ratio = f32 / gemm_seconds(rows, hidden, inter, dtype, 2)
        lines.append(f"{dtype} [{rows}×{hidden}]·[{hidden}×{inter}] GEMM: {ratio:.2f}× float32's speed")
    separate = gemm_seconds(rows, hidden, hidden, "float32") + 2 * gemm_seconds(rows, hidden, kv, "float32")
    fused = gemm_seconds(rows, hidden, hidden + 2 * kv, "float32")
    lines.append(f"fused QKV projection: {separate / fused:.2f}× the separate products' speed")
    lines.append(f"fused gate/up projection: {2 * f32 / gemm_seconds(rows, hidden, 2 * inter, 'float32'):.2f}× "
                 "the separate products' speed")
    lines.append(f"oneDNN on packed float32 weights: [{rows}×{hidden}]·[{hidden}×{inter}] "
                 f"{f32 / packed_seconds(rows, hidden, inter):.2f}×, LM head [64×{hidden}]·[{hidden}×{vocab}] "
                 f"{gemm_seconds(64, hidden, vocab, 'float32') / packed_seconds(64, hidden, vocab):.2f}× "
                 "torch's default (MKL) speed")
    lines.append(f"gated MLP with oneDNN post-ops (silu of the gate and the product with up fused into "
                 f"their GEMMs) on 2048 tokens: {mlp_ratio(2048, hidden, inter):.2f}× three packed products "
                 "with separate silu and mul")
    lines.append(f"grouped-query attention with a padding mask (24 rows × 50 queries × 160 keys): SDPA reading "
                 f"grouped heads (enable_gqa) {gqa_ratio(heads, kv // (hidden // heads), hidden // heads):.2f}× "
                 "repeated key/value heads")
    lines.append(f"native bf16 dot products (AVX512-BF16/AMX): {'yes' if native_bf16() else 'no'}")
    return lines


def interleaved_ratio(before: Any, after: Any, reps: int) -> float:
    """Median time of ``before()`` over median time of ``after()``, the two called in turn
    ``reps`` times (after a warm-up of each), so a load that changes meanwhile hits both."""
    times: tuple[list[float], list[float]] = ([], [])
    before(), after()
    for _ in range(reps):
        for run, kept in ((before, times[0]), (after, times[1])):
            t = time.perf_counter()
            run()
            kept.append(time.perf_counter() - t)
    return statistics.median(times[0]) / statistics.median(times[1])


def mlp_ratio(m: int, hidden: int, inter: int, reps: int = 15) -> float:
    """Speed of a SwiGLU MLP on ``m`` tokens with packed float32 weights fused as
    ``lingdiag.models.hf.linear.GatedMLP`` runs it, against separate ``silu`` and ``mul``."""
    import torch

    torch.set_num_threads(THREADS)
    ops = torch.ops.mkldnn
    x = torch.randn(m, hidden)
    gate, up = (ops._reorder_linear_weight(torch.randn(inter, hidden) * 0.05, None) for _ in range(2))
    down = ops._reorder_linear_weight(torch.randn(hidden, inter) * 0.05, None)

    def separate() -> Any:
        h = torch.nn.functional.silu(ops._linear_pointwise(x, gate, None, "none", [], "")) \
            * ops._linear_pointwise(x, up, None, "none", [], "")
        return ops._linear_pointwise(h, down, None, "none", [], "")

    def fused() -> Any:
        h = ops._linear_pointwise.binary(x, ops._linear_pointwise(x, gate, None, "swish", [], ""), up, None, "mul")
        return ops._linear_pointwise(h, down, None, "none", [], "")
    return interleaved_ratio(separate, fused, reps)


def gqa_ratio(heads: int, kv_heads: int, dim: int, reps: int = 30) -> float:
    """Speed of SDPA on a generation prefill's shape (24 rows × 50 queries over 160 keys, left
    padding and a causal mask) reading grouped key/value heads, against each head repeated per
    query head as transformers' ``repeat_kv`` does."""
    import torch

    torch.set_num_threads(THREADS)
    rows, queries, keys = 24, 50, 160
    q, k, v = torch.randn(rows, heads, queries, dim), *(torch.randn(rows, kv_heads, keys, dim) for _ in range(2))
    mask = torch.ones(keys, keys, dtype=torch.bool).tril()[-queries:].expand(rows, 1, queries, keys).clone()
    for r in range(rows):
        mask[r, :, :, keys - queries:keys - queries + r] = False  # row r has r padding slots
    sdpa, n = torch.nn.functional.scaled_dot_product_attention, heads // kv_heads
    return interleaved_ratio(
        lambda: sdpa(q, k.repeat_interleave(n, 1), v.repeat_interleave(n, 1), attn_mask=mask),
        lambda: sdpa(q, k, v, attn_mask=mask, enable_gqa=True), reps)


def packed_seconds(m: int, k: int, n: int, reps: int = 5) -> float:
    """Best time of ``[m, k] @ [k, n]`` in float32 on oneDNN with the weight packed once (as
    ``lingdiag.models.hf.linear.PackedLinear`` runs the model's layers)."""
    import torch

    torch.set_num_threads(THREADS)
    a = torch.randn(m, k)
    packed = torch.ops.mkldnn._reorder_linear_weight(torch.randn(n, k), None)
    return best_seconds(lambda: torch.ops.mkldnn._linear_pointwise(a, packed, None, "none", [], ""), reps)


def worker(python: str, script: str, task: str, model_dir: Path, payload: dict[str, Any],
           *extra: str, tag: str = "") -> dict[str, Any]:
    """Run one timed task in a fresh process and return its result file (``tag`` names a variant's files)."""
    name = f"{Path(script).stem}-{task}{tag}{''.join(extra).replace('--', '-')}"
    requests, result = WORK / f"{task}{tag}-requests.json", WORK / f"{name}.json"
    requests.write_text(json.dumps(payload))
    env = {**os.environ, "OMP_NUM_THREADS": str(THREADS), "TOKENIZERS_PARALLELISM": "false",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    print(f"  running {name} ...", file=sys.stderr, flush=True)
    subprocess.run([python, str(ROOT / "bench" / script), task, str(model_dir), str(requests), str(result), *extra],
                   check=True, env=env)
    return dict(json.loads(result.read_text()))


def lingdiag_cli(args: list[str], cache: Path) -> float:
    """Wall seconds of one ``lingdiag`` command against the response cache in ``cache``."""
    env = {**os.environ, "LINGDIAG_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lingdiag", *args], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def fresh_cache(models: Path) -> Path:
    """An empty lingdiag cache that shares the converted models."""
    cache = WORK / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    (cache / "models").symlink_to(models)
    return cache


def agreement(a: list[str], b: list[str]) -> float:
    """Share of positions where two decision lists agree."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


@dataclass(frozen=True)
class Model:
    """The benchmarked model: SmolLM2-135M-Instruct converted to a plain transformers directory."""

    dir: Path
    config: dict[str, Any]
    n_params: int
    n_head: int
    """Parameters of the LM head (tied: the embedding matrix)."""

    def best_rate(self, before: float) -> float:
        """The best float32 rate this CPU reached in the command: MKL's 2048² GEMM (``before`` and
        now), or oneDNN on a packed weight at the model's own projection shape (what lingdiag's
        layers run on)."""
        hidden, inter = self.config["hidden_size"], self.config["intermediate_size"]
        return max(before, matmul_rate(), 2 * 4096 * hidden * inter / packed_seconds(4096, hidden, inter))

    def floor_seconds(self, usage: dict[str, int], rate: float) -> float:
        """Compute floor of lingdiag's work: the body on the tokens it ran, the LM head on the positions it scored."""
        return (2 * (self.n_params - self.n_head) * usage["forward_tokens"]
                + 2 * self.n_head * usage["head_positions"]) / rate


def smollm2() -> Model:
    """The converted model and its sizes."""
    from lingdiag.models.embedded import ensure_converted
    from lingdiag.models.hf.load import stored_param_count

    model_dir, _ = ensure_converted("smollm2-135m")
    config = json.loads((model_dir / "config.json").read_text())
    return Model(model_dir, config, stored_param_count(str(model_dir)) or 0,
                 config["vocab_size"] * config["hidden_size"])


def main() -> None:
    """Run the three comparisons and print the table and the machine-readable last line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm-eval-python", required=True, help="python of the venv holding lm-eval")
    parser.add_argument("--plain", action="store_true", help="also time lingdiag with prefix reuse off")
    parser.add_argument("--limit", type=int, help="only the first N pairs and items (a quick check, not the benchmark)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)

    from lingdiag.models.hf import HFBackend
    from lingdiag.records import Generation, GenerationRequest
    from lingdiag.suite import SUITES
    from lingdiag.suites.explica import data as explica_data
    from lingdiag.suites.explica.tasks import PerplexityTask
    from lingdiag.suites.imperfective import prompts as imperfective

    model = smollm2()
    model_dir, config, n_params = model.dir, model.config, model.n_params
    rate_before = matmul_rate()

    # (1) ExpliCa: 4,800 log-likelihood requests.
    explica_path = data_path("explica", "explica/explica.csv")
    pairs = SUITES.get("explica").load(str(explica_path)).items[:args.limit]
    ppl_task = PerplexityTask()
    ll_requests = [r for it in pairs for r in ppl_task.render(it)]
    ll_payload = {"requests": [[r.context, r.continuation] for r in ll_requests]}  # type: ignore[union-attr]
    ref = worker(args.lm_eval_python, "lmeval_worker.py", "loglik", model_dir, ll_payload)
    ours = worker(sys.executable, "lingdiag_worker.py", "loglik", model_dir, ll_payload)
    unpacked = worker(sys.executable, "lingdiag_worker.py", "loglik", model_dir, ll_payload, "--unpacked")
    plain = worker(sys.executable, "lingdiag_worker.py", "loglik", model_dir, ll_payload, "--plain") \
        if args.plain else None

    def explica_decisions(logprobs: list[float]) -> list[str]:
        n_tokens = [a[1] for a in ours["answers"]]
        out = []
        for k in range(len(logprobs) // 4):
            ppl = {c: math.exp(-logprobs[4 * k + j] / n_tokens[4 * k + j])
                   for j, c in enumerate(explica_data.CONNECTIVES)}
            out.append(explica_data.best(ppl, lower_is_better=True))
        return out

    ll_agree = agreement(explica_decisions([a[0] for a in ref["answers"]]),
                         explica_decisions([a[0] for a in ours["answers"]]))
    ll_maxdiff = max(abs(a[0] - b[0]) for a, b in zip(ref["answers"], ours["answers"], strict=True))
    tokens_all = sum(a[1] for a in ours["answers"])  # model inputs: prefix token + continuation - 1

    # (2) ImperfectiveNLI: 400 zero-shot generations.
    imp_path = data_path("imperfective", "imperfective_nli/imperfectiveNLI.json")
    items = SUITES.get("imperfective").load(str(imp_path)).items[:args.limit]
    strategy = imperfective.strategy("zero-shot", max_new_tokens=MAX_NEW_TOKENS)
    gen_requests: list[GenerationRequest] = [strategy.render(it)[0] for it in items]
    renderer = HFBackend(str(model_dir))
    gen_ref = worker(args.lm_eval_python, "lmeval_worker.py", "gen", model_dir,
                     {"prompts": [renderer.render(r) for r in gen_requests], "max_new_tokens": MAX_NEW_TOKENS})
    gen_payload = {"messages": [[{"role": m.role, "content": m.content} for m in r.messages] for r in gen_requests],
                   "max_new_tokens": MAX_NEW_TOKENS}
    gen_ours = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, gen_payload)
    # The default generation budget favours speed; a small one holds about as many rows as
    # lm-eval's batch of 16, trading some speed for memory.
    gen_small = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, gen_payload,
                       "--batch-tokens", str(SMALL_GEN_BUDGET))
    gen_unpacked = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, gen_payload, "--unpacked")

    def labels_of(some: list[Any], texts: list[str]) -> list[str]:
        return [strategy.parse(it, [Generation(text=t)]).label for it, t in zip(some, texts, strict=True)]

    def labels(texts: list[str]) -> list[str]:
        return labels_of(items, texts)

    gen_agree = agreement(labels(gen_ref["answers"]), labels(gen_ours["answers"]))
    same_text = agreement(gen_ref["answers"], gen_ours["answers"])
    small_same = agreement(gen_ours["answers"], gen_small["answers"])

    # (4) Chain of thought: long answers, where continuous batching keeps batches full.
    cot_items = items[::max(1, len(items) // COT_ITEMS)][:COT_ITEMS]
    cot = imperfective.strategy("cot", max_new_tokens=COT_NEW_TOKENS)
    cot_requests = [cot.render(it)[0] for it in cot_items]
    cot_ref = worker(args.lm_eval_python, "lmeval_worker.py", "gen", model_dir,
                     {"prompts": [renderer.render(r) for r in cot_requests], "max_new_tokens": COT_NEW_TOKENS},
                     tag="-cot")
    cot_payload = {"messages": [[{"role": m.role, "content": m.content} for m in r.messages] for r in cot_requests],
                   "max_new_tokens": COT_NEW_TOKENS}
    cot_ours = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, cot_payload, tag="-cot")
    cot_fixed = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, cot_payload, "--fixed", tag="-cot")

    def cot_labels(texts: list[str]) -> list[str]:
        return [cot.parse(it, [Generation(text=t)]).label for it, t in zip(cot_items, texts, strict=True)]

    cot_agree = agreement(cot_labels(cot_ref["answers"]), cot_labels(cot_ours["answers"]))
    cot_same_fixed = agreement(cot_ours["answers"], cot_fixed["answers"])

    # (5) The half types against float32: in full where the CPU has native bf16, else on a sample.
    full_half = native_bf16()
    n_pairs = len(pairs) if full_half else min(BF16_PAIRS, len(pairs))
    n_items = len(items) if full_half else min(BF16_ITEMS, len(items))
    ll_half_payload = {"requests": ll_payload["requests"][:4 * n_pairs]}
    gen_half_payload = {**gen_payload, "messages": gen_payload["messages"][:n_items]}
    if full_half:
        f32_ll, f32_gen = ours, gen_ours
    else:
        f32_ll = worker(sys.executable, "lingdiag_worker.py", "loglik", model_dir, ll_half_payload, tag="-sample")
        f32_gen = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, gen_half_payload, tag="-sample")
    f32_pairs = explica_decisions([a[0] for a in f32_ll["answers"]])
    ref_pairs = explica_decisions([a[0] for a in ref["answers"][:4 * n_pairs]])
    f32_labels = labels_of(items[:n_items], f32_gen["answers"])
    ref_labels = labels_of(items[:n_items], gen_ref["answers"][:n_items])
    half: dict[str, HalfRun] = {}
    for dtype in HALF_TYPES:
        h_ll = worker(sys.executable, "lingdiag_worker.py", "loglik", model_dir, ll_half_payload, "--dtype", dtype,
                      tag="-half")
        h_gen = worker(sys.executable, "lingdiag_worker.py", "gen", model_dir, gen_half_payload, "--dtype", dtype,
                       tag="-half")
        h_pairs = explica_decisions([a[0] for a in h_ll["answers"]])
        h_labels = labels_of(items[:n_items], h_gen["answers"])
        half[dtype] = HalfRun(
            ll=h_ll, gen=h_gen,
            ll_speedup=f32_ll["seconds"] / h_ll["seconds"], gen_speedup=f32_gen["seconds"] / h_gen["seconds"],
            pairs_f32=agreement(h_pairs, f32_pairs), pairs_ref=agreement(h_pairs, ref_pairs),
            items_f32=agreement(h_labels, f32_labels), items_ref=agreement(h_labels, ref_labels),
            maxdiff=max(abs(a[0] - b[0]) for a, b in zip(f32_ll["answers"], h_ll["answers"], strict=True)),
        )

    # (3) A cold lingdiag run of (2), then the same run again from the response cache.
    cache = fresh_cache(model_dir.parent.resolve())
    run_args = ["run", "imperfective", "--model", "smollm2-135m", "--dataset", str(imp_path), "--strategy",
                "zero-shot", "-o", f"max_new_tokens={MAX_NEW_TOKENS}", "--json",
                *(["--limit", str(args.limit)] if args.limit else [])]
    print("  running lingdiag run (cold, then from the cache) ...", file=sys.stderr, flush=True)
    cold = lingdiag_cli([*run_args, "--out", str(cache / "runs" / "cold")], cache)
    rerun = lingdiag_cli([*run_args, "--out", str(cache / "runs" / "rerun")], cache)
    rerun_meta = json.loads((cache / "runs" / "rerun" / "meta.json").read_text())
    identical = (cache / "runs" / "cold" / "items.jsonl").read_bytes() == \
        (cache / "runs" / "rerun" / "items.jsonl").read_bytes()

    rate = model.best_rate(rate_before)
    usage = ours["usage"]
    floor_all = 2 * n_params * tokens_all / rate
    floor_ours = model.floor_seconds(usage, rate)

    loglik_speedup = ref["seconds"] / ours["seconds"]
    gen_speedup = gen_ref["seconds"] / gen_ours["seconds"]
    rerun_fraction = rerun / cold
    floor_ratio = ours["seconds"] / floor_ours
    pooled = (ll_agree * len(pairs) + gen_agree * len(items)) / (len(pairs) + len(items))

    def mb(x: float) -> str:
        return f"{x / 1024:.2f} GB"

    rows = [
        "| work (smollm2-135m, float32, 2 threads) | lm-eval 0.4.13 (batch 16) | lingdiag | speedup | "
        "peak RSS lm-eval | peak RSS lingdiag | same decisions |",
        "|---|---|---|---|---|---|---|",
        f"| (1) ExpliCa {len(ll_requests):,} log-likelihood requests, {tokens_all / 1000:.1f}k tokens | "
        f"{ref['seconds']:.1f} s ({len(ll_requests) / ref['seconds']:.0f} req/s) | "
        f"{ours['seconds']:.1f} s ({len(ll_requests) / ours['seconds']:.0f} req/s) | {loglik_speedup:.2f}× | "
        f"{mb(ref['peak_rss_mb'])} | {mb(ours['peak_rss_mb'])} | {ll_agree:.2%} of {len(pairs):,} pairs |",
        f"| (1) lingdiag on torch's default kernels (`packed_linears=false`, the previous path) | — | "
        f"{unpacked['seconds']:.1f} s | packed = {unpacked['seconds'] / ours['seconds']:.2f}× unpacked | — | "
        f"{mb(unpacked['peak_rss_mb'])} | max \\|Δ log-prob\\| packed vs unpacked "
        f"{max(abs(a[0] - b[0]) for a, b in zip(unpacked['answers'], ours['answers'], strict=True)):.1e} |",
        f"| (2) ImperfectiveNLI {len(items)} generations, ≤{MAX_NEW_TOKENS} new tokens | "
        f"{gen_ref['seconds']:.1f} s ({len(items) / gen_ref['seconds']:.1f} items/s) | "
        f"{gen_ours['seconds']:.1f} s ({len(items) / gen_ours['seconds']:.1f} items/s) | {gen_speedup:.2f}× | "
        f"{mb(gen_ref['peak_rss_mb'])} | {mb(gen_ours['peak_rss_mb'])} | {gen_agree:.2%} of {len(items)} items |",
        f"| (2) lingdiag on torch's default kernels (`packed_linears=false`) | — | "
        f"{gen_unpacked['seconds']:.1f} s | packed = {gen_unpacked['seconds'] / gen_ours['seconds']:.2f}× unpacked | "
        f"— | {mb(gen_unpacked['peak_rss_mb'])} | same text as packed: "
        f"{agreement(gen_unpacked['answers'], gen_ours['answers']):.2%} |",
        f"| (2) with `--batch-tokens {SMALL_GEN_BUDGET}` (≈ lm-eval's batch size) | — | "
        f"{gen_small['seconds']:.1f} s ({len(items) / gen_small['seconds']:.1f} items/s) | "
        f"{gen_ref['seconds'] / gen_small['seconds']:.2f}× | — | {mb(gen_small['peak_rss_mb'])} | "
        f"same text as the default budget: {small_same:.2%} |",
        f"| (3) `lingdiag run` of (2): cold vs re-run from the cache | — | {cold:.1f} s cold, {rerun:.2f} s re-run | "
        f"re-run = {rerun_fraction:.1%} of cold | — | — | records identical: {identical} |",
    ]
    rows += [
        f"| (4) ImperfectiveNLI CoT, {len(cot_items)} items, ≤{COT_NEW_TOKENS} new tokens | "
        f"{cot_ref['seconds']:.1f} s | {cot_ours['seconds']:.1f} s | {cot_ref['seconds'] / cot_ours['seconds']:.2f}× | "
        f"{mb(cot_ref['peak_rss_mb'])} | {mb(cot_ours['peak_rss_mb'])} | {cot_agree:.2%} of {len(cot_items)} items |",
        f"| (4) lingdiag with fixed batches (`continuous_batching=false`, the previous path) | — | "
        f"{cot_fixed['seconds']:.1f} s | continuous = {cot_fixed['seconds'] / cot_ours['seconds']:.2f}× fixed | — | "
        f"{mb(cot_fixed['peak_rss_mb'])} | same text as continuous: {cot_same_fixed:.2%} |",
    ]
    for dtype, h in half.items():
        rows += [
            f"| (5) `--dtype {dtype}`, (1) on {n_pairs:,} pairs: lingdiag float32 → {dtype} | — | "
            f"{f32_ll['seconds']:.1f} s → {h.ll['seconds']:.1f} s | {h.ll_speedup:.2f}× | — | "
            f"{mb(f32_ll['peak_rss_mb'])} → {mb(h.ll['peak_rss_mb'])} | vs float32 {h.pairs_f32:.2%}, "
            f"vs lm-eval float32 {h.pairs_ref:.2%}; max \\|Δ log-prob\\| {h.maxdiff:.3f} |",
            f"| (5) `--dtype {dtype}`, (2) on {n_items} items: lingdiag float32 → {dtype} | — | "
            f"{f32_gen['seconds']:.1f} s → {h.gen['seconds']:.1f} s | {h.gen_speedup:.2f}× | — | "
            f"{mb(f32_gen['peak_rss_mb'])} → {mb(h.gen['peak_rss_mb'])} | vs float32 {h.items_f32:.2%}, "
            f"vs lm-eval float32 {h.items_ref:.2%} |",
        ]
    if plain is not None:
        rows.append(f"| (1) lingdiag plain path (no prefix reuse) | — | {plain['seconds']:.1f} s | "
                    f"{ref['seconds'] / plain['seconds']:.2f}× | — | {mb(plain['peak_rss_mb'])} | — |")
    print("\n".join(rows))
    print(f"\nmatmul rate (best float32 of MKL's 2048² GEMM and oneDNN's packed model-shape GEMM, {THREADS} threads, "
          "in this command): "
          f"{rate / 1e9:.0f} GFLOP/s")
    print(f"compute floor of (1), all {tokens_all:,} tokens at 2N = {2 * n_params / 1e6:.0f} MFLOP/token: "
          f"{floor_all:.1f} s (lm-eval at {ref['seconds'] / floor_all:.2f}× it, "
          f"lingdiag at {ours['seconds'] / floor_all:.2f}×)")
    print(f"compute floor of lingdiag's work in (1): body on {usage['forward_tokens']:,} unshared tokens, "
          f"LM head on {usage['head_positions']:,} positions: {floor_ours:.1f} s "
          f"(lingdiag at {floor_ratio:.2f}× it)")
    target = ref["seconds"] / 3
    print(f"float32 target of 3× lm-eval on (1): {target:.1f} s, "
          f"{'below' if target < floor_ours else 'above'} the compute floor of lingdiag's work ({floor_ours:.1f} s "
          f"at {rate / 1e9:.0f} GFLOP/s): the least float32 work an exact scorer of these requests does "
          f"(each distinct prefix once, the LM head at every scored position)")
    print(f"CPU seconds of the request phases (less sensitive to a shared CPU): (1) lm-eval "
          f"{ref['cpu_seconds']:.1f}, lingdiag {ours['cpu_seconds']:.1f} "
          f"({ref['cpu_seconds'] / ours['cpu_seconds']:.2f}×); "
          f"(2) lm-eval {gen_ref['cpu_seconds']:.1f}, lingdiag {gen_ours['cpu_seconds']:.1f} "
          f"({gen_ref['cpu_seconds'] / gen_ours['cpu_seconds']:.2f}×)")
    print(f"(1) max |Δ log-prob| lm-eval vs lingdiag: {ll_maxdiff:.2e}; "
          f"(2) identical text: {same_text:.2%}; re-run cache misses: {rerun_meta['usage'].get('cache_misses')}")
    print("levers (float32 unless named, " + f"{THREADS} threads): " + "; ".join(
        levers(config["hidden_size"], config["hidden_size"] // config["num_attention_heads"]
               * config["num_key_value_heads"], config["intermediate_size"], config["vocab_size"],
               config["num_attention_heads"])))
    print("note: the CPU may be shared; ratios compare runs of this one command.")
    print(f"bench: loglik_speedup={loglik_speedup:.2f} gen_speedup={gen_speedup:.2f} "
          f"rerun_fraction={rerun_fraction:.3f} floor_ratio={floor_ratio:.2f} agreement={pooled:.4f} "
          f"bf16_loglik_speedup={half['bfloat16'].ll_speedup:.2f} "
          f"bf16_agreement={half['bfloat16'].agreement:.4f} "
          f"bf16_mixed_loglik_speedup={half['bfloat16-mixed'].ll_speedup:.2f} "
          f"bf16_mixed_agreement={half['bfloat16-mixed'].agreement:.4f}")


if __name__ == "__main__":
    main()
