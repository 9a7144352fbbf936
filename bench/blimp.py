"""BLiMP's sentences side by side: lingdiag, lm-eval's BLiMP task and minicons, one command.

Run by ``bash bench/blimp.sh`` (installs lm-eval and minicons into their own venvs under
``bench/.work``). Every tool loads SmolLM2-135M-Instruct converted to a plain transformers
directory, float32 on the CPU with 2 torch threads, in a fresh subprocess; only scoring is timed.

The work: the minimal pairs of the BLiMP paradigms in ``../shared/datasets/blimp`` (else the
files ``lingdiag fetch blimp`` downloaded), both sentences of each pair (6,000 sentences for
the six shared paradigms). Each tool scores them in its own convention and lingdiag scores
them in the same one, as a named scoring policy:

- lm-eval's BLiMP task: ``" " + sentence`` after the model's BOS (else EOS), every token
  scored; the requests its task builds (context ``""``, continuation ``" " + sentence``) are
  sent to ``HFLM.loglikelihood``. lingdiag: ``--scoring-policy lm-eval``.
- minicons' ``sequence_score`` default: no BOS, the first token not scored.
  lingdiag: ``--scoring-policy minicons``.

It prints per-paradigm accuracy of each (a pair is right when the good sentence has the
higher summed log-prob), the share of pairs where lingdiag and the tool decide alike, the
largest log-prob difference, wall and CPU seconds, and the compute floor of lingdiag's work
(model FLOPs of the tokens it ran through the body and the LM head ÷ the machine's best
float32 matmul rate). ``--lingdiag-only`` times lingdiag alone (both policies).
``--call-tokens 128,none,...`` instead times lingdiag alone under the lm-eval policy with each
value of the placement's ``call_tokens`` (how the scoring tree splits its last level by length)
and prints each one's wall time against the first's.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from typing import Any

from bench import SHARED, WORK, matmul_rate, smollm2, worker


def pairs(limit: int | None) -> list[tuple[str, str, str]]:
    """``(paradigm, good, bad)`` of every pair (the first ``limit`` per paradigm)."""
    from lingdiag.suites.minimal_pairs.files import load

    folder = SHARED / "blimp"
    items = load(str(folder) if folder.is_dir() else "blimp").items
    seen: dict[str, int] = defaultdict(int)
    out = []
    for it in items:
        uid = str(it.tags["UID"])
        seen[uid] += 1
        if limit is None or seen[uid] <= limit:
            out.append((uid, it.fields["sentence_good"], it.fields["sentence_bad"]))
    return out


def accuracy_by_paradigm(work: list[tuple[str, str, str]], logprobs: list[float]) -> dict[str, float]:
    """Share of pairs per paradigm whose good sentence scores strictly higher."""
    hits: dict[str, list[bool]] = defaultdict(list)
    for k, (uid, _, _) in enumerate(work):
        hits[uid].append(logprobs[2 * k] > logprobs[2 * k + 1])
    return {uid: sum(v) / len(v) for uid, v in sorted(hits.items())}


def decisions(logprobs: list[float]) -> list[bool]:
    """Per pair: whether the good sentence wins."""
    return [logprobs[k] > logprobs[k + 1] for k in range(0, len(logprobs), 2)]


def side(name: str, ours: dict[str, Any], theirs: dict[str, Any] | None, work: list[tuple[str, str, str]],
         ours_lp: list[float], theirs_lp: list[float] | None) -> list[str]:
    """The report lines of one convention."""
    lines = [f"\n## {name} convention"]
    acc_ours = accuracy_by_paradigm(work, ours_lp)
    acc_theirs = accuracy_by_paradigm(work, theirs_lp) if theirs_lp is not None else {}
    lines.append(f"| paradigm | lingdiag | {name} |\n|---|---|---|")
    for uid, a in acc_ours.items():
        b = acc_theirs.get(uid)
        lines.append(f"| {uid} | {a:.3f} | {'–' if b is None else f'{b:.3f}'} |")
    lines.append(f"lingdiag: {ours['seconds']:.1f} s wall, {ours['cpu_seconds']:.1f} CPU-s, "
                 f"peak RSS {ours['peak_rss_mb']:.0f} MB")
    if theirs is not None and theirs_lp is not None:
        same = sum(x == y for x, y in zip(decisions(ours_lp), decisions(theirs_lp), strict=True))
        worst = max(abs(a - b) for a, b in zip(ours_lp, theirs_lp, strict=True))
        lines.append(f"{name}: {theirs['seconds']:.1f} s wall, {theirs['cpu_seconds']:.1f} CPU-s, peak RSS "
                     f"{theirs['peak_rss_mb']:.0f} MB; lingdiag {theirs['seconds'] / ours['seconds']:.2f}x faster; "
                     f"decisions agree on {same}/{len(work)} pairs; largest |Δ log-prob| {worst:.2e} nat")
    return lines


def call_tokens_sweep(values: list[str], model_dir: Any, payload: dict[str, Any]) -> None:
    """Time lingdiag's lm-eval-policy scoring under each ``call_tokens`` value, against the first."""
    runs = [worker(sys.executable, "blimp_worker.py", "lm-eval", model_dir, payload, "--call-tokens", v,
                   tag="-blimp") for v in values]
    base = runs[0]
    print(f"# BLiMP, lm-eval policy, {len(payload['sentences'])} sentences: call_tokens against {values[0]}")
    print("| call_tokens | seconds | ratio | padded tokens | forward passes' tokens | max |Δ log-prob| |")
    print("|---|---|---|---|---|---|")
    for v, run in zip(values, runs, strict=True):
        delta = max(abs(a[0] - b[0]) for a, b in zip(run["answers"], base["answers"], strict=True))
        print(f"| {v} | {run['seconds']:.1f} | {run['seconds'] / base['seconds']:.3f} | "
              f"{run['usage']['padded_tokens']:,} | {run['usage']['forward_tokens']:,} | {delta:.1e} |")


def main() -> None:
    """Run every tool on the same sentences and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm-eval-python", help="python of the venv holding lm-eval")
    parser.add_argument("--minicons-python", help="python of the venv holding minicons")
    parser.add_argument("--lingdiag-only", action="store_true", help="time lingdiag alone")
    parser.add_argument("--limit", type=int, help="only the first N pairs per paradigm (a quick check)")
    parser.add_argument("--call-tokens", help="comma-separated call_tokens values to time lingdiag under")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)

    from lingdiag.io.atomic import write_atomic

    model = smollm2()
    model_dir = model.dir
    rate_before = matmul_rate()

    work = pairs(args.limit)
    sentences = [s for _, good, bad in work for s in (good, bad)]
    payload = {"sentences": sentences}
    if args.call_tokens:
        call_tokens_sweep(args.call_tokens.split(","), model_dir, payload)
        return
    ours_lm = worker(sys.executable, "blimp_worker.py", "lm-eval", model_dir, payload, tag="-blimp")
    ours_mc = worker(sys.executable, "blimp_worker.py", "minicons", model_dir, payload, tag="-blimp")
    lm = mc = None
    if args.lm_eval_python and not args.lingdiag_only:
        lm = worker(args.lm_eval_python, "lmeval_worker.py", "loglik", model_dir,
                    {"requests": [["", " " + s] for s in sentences]}, tag="-blimp")
    if args.minicons_python and not args.lingdiag_only:
        mc = worker(args.minicons_python, "minicons_worker.py", "seq", model_dir, payload, tag="-blimp")

    rate = model.best_rate(rate_before)
    lines = [f"# BLiMP: {len(work)} pairs, {len(sentences)} sentences, SmolLM2-135M-Instruct, float32, 2 threads"]
    lines += side("lm-eval", ours_lm, lm, work, [a[0] for a in ours_lm["answers"]],
                  [a[0] for a in lm["answers"]] if lm else None)
    lines += side("minicons", ours_mc, mc, work, [a[0] for a in ours_mc["answers"]],
                  [float(a) for a in mc["answers"]] if mc else None)
    for name, ours in (("lm-eval", ours_lm), ("minicons", ours_mc)):
        usage = ours["usage"]
        floor = model.floor_seconds(usage, rate)
        lines.append(f"\ncompute floor of lingdiag's work under the {name} policy: body on "
                     f"{usage['forward_tokens']:,} unshared tokens, LM head on {usage['head_positions']:,} positions, "
                     f"at {rate / 1e9:.0f} GFLOP/s: {floor:.1f} s; lingdiag at {ours['seconds'] / floor:.2f}x it")
    if args.lingdiag_only or not (lm and mc):
        lines.append("\n(lm-eval and/or minicons not run: lingdiag's side only)")
    print("\n".join(lines))
    write_atomic(WORK / "blimp-report.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
