"""What a bf16 run's fragile decisions cost, and how the noise bound behind them is measured.

``python bench/fragile.py`` runs the same log-likelihood conditions of the embedded SmolLM2 on the
CPU three times in one command: float32 (the baseline and the truth), bfloat16, and bfloat16 with
``rescore_fragile=float32``. It prints, per suite and in total:

- the wall seconds of each run and their ratios to float32's;
- the requests re-scored in float32 (count and share);
- the decisions that differ from float32's (bf16 alone, and with re-scoring: which should be 0)
  and how many were marked fragile;
- the noise measurement: what flips a decision is how far two of its texts move *relative to each
  other*, so the figure the bound is checked against is the largest |Δ_i - Δ_j| / (n_i + n_j) over
  the pairs of texts of one item (Δ: log p(bf16) - log p(float32) of a text, n: its scored tokens),
  beside the largest per-request |Δ| / n (larger: a shared prefix moves every text of an item alike),
  against the bound ``NOISE_PER_TOKEN`` uses (``lingdiag.models.hf.placement``).

Nothing is asserted; the figures go to stdout and ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path
from typing import Any

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.io.atomic import write_atomic
from lingdiag.models.hf.calibrate import HEADROOM
from lingdiag.models.hf.placement import NOISE_PER_TOKEN
from lingdiag.models.providers import load_backend

MODEL = "smollm2-135m"
RUNS = {"float32": {}, "bfloat16": {"dtype": "bfloat16"},
        "bfloat16+rescore": {"dtype": "bfloat16", "rescore_fragile": "float32"},
        "bfloat16+rescore+static": {"dtype": "bfloat16", "rescore_fragile": "float32", "calibrate": False}}
"""float32 is the truth; bf16 runs carry the calibrated bound (``calibrate``, the default) except the last,
which uses the static ``NOISE_PER_TOKEN`` bound for comparison."""


def configs(blimp: Path, items: int, explica: str) -> dict[str, RunConfig]:
    """The suites' log-likelihood conditions: ExpliCa perplexity, ImperfectiveNLI loglik, one BLiMP paradigm."""
    return {"explica": RunConfig(suite="explica", model=MODEL, dataset=explica, axes={"task": ["perplexity"]},
                                 limit=items),
            "imperfective": RunConfig(suite="imperfective", model=MODEL,
                                      axes={"strategy": ["zero-shot"], "scoring": ["loglik"]}, limit=items),
            "blimp": RunConfig(suite="minimal-pairs", model=MODEL, dataset=str(blimp), limit=items)}


def records(path: Path) -> list[dict[str, Any]]:
    """A run's ``items.jsonl``."""
    return [json.loads(line) for line in (path / "items.jsonl").read_text().splitlines()]


def by_bound(low: list[dict[str, Any]], truth: list[dict[str, Any]], per_token: float | None,
             worst: float) -> dict[str, dict[str, float]]:
    """What other per-token bounds would have marked, read off the bf16 records: a decision is fragile at
    bound ``b`` when its margin is within ``b`` times its pair's scored tokens (``noise / per_token``), and
    each bound's flips outside that set. The bounds: the calibrated one, the calibration's worst move
    (no headroom), and this suite's own worst pair move, which no calibration can know in advance."""
    if not per_token:
        return {}
    out = {}
    bounds = {"calibrated": per_token, "calibration_worst": per_token / HEADROOM, "oracle_worst": worst}
    for name, bound in bounds.items():
        marked = [r["decision"]["margin"] is not None and r["decision"]["margin"] <= bound * r["decision"]["noise"]
                  / per_token for r in low]
        out[name] = {"bound": round(bound, 5), "fragile_share": round(sum(marked) / len(low), 4),
                     "flips_outside": sum(x["label"] != y["label"] and not m
                                          for x, y, m in zip(low, truth, marked, strict=True))}
    return out


def main() -> None:
    """Run the three dtypes on every suite and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200, help="items per suite")
    parser.add_argument("--blimp", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets"
                        / "blimp" / "anaphor_gender_agreement.jsonl", help="one BLiMP paradigm file")
    parser.add_argument("--explica", default="official",
                        help="ExpliCa data: official (``lingdiag data fetch explica`` first) or builtin (72 items)")
    parser.add_argument("--suites", nargs="+", default=["explica", "imperfective", "blimp"],
                        choices=["explica", "imperfective", "blimp"], help="which suites to run")
    parser.add_argument("--out", type=Path, default=Path("bench/.work/fragile.json"))
    args = parser.parse_args()
    if not args.blimp.is_file():
        sys.exit(f"bench/fragile.py: {args.blimp}: no such BLiMP paradigm file (--blimp)")
    figures: dict[str, Any] = {"static_bound_per_token": NOISE_PER_TOKEN["bfloat16"]}
    with tempfile.TemporaryDirectory() as tmp:
        paradigm = Path(tmp) / "blimp"
        paradigm.mkdir()
        shutil.copy(args.blimp, paradigm)
        backends = {name: load_backend(MODEL, options) for name, options in RUNS.items()}
        precision = backends["bfloat16"].precision()
        figures["calibrated_bound_per_token"] = precision.per_token if precision else None
        totals = dict.fromkeys(RUNS, 0.0)
        for suite, config in configs(paradigm, args.items, args.explica).items():
            if suite not in args.suites:
                continue
            seconds, got, rescored = {}, {}, {}
            for name, backend in backends.items():
                before = backend.usage().get("rescored_requests", 0)  # type: ignore[attr-defined]
                start = time.perf_counter()
                evaluate(config, backend, Path(tmp) / suite / name)
                seconds[name] = time.perf_counter() - start
                totals[name] += seconds[name]
                got[name] = records(Path(tmp) / suite / name)
                if "rescore" in name:
                    rescored[name] = backend.usage().get("rescored_requests", 0) - before  # type: ignore[attr-defined]
            truth = got["float32"]
            requests = sum(len(r["outputs"]) for r in truth)
            gaps = [abs(a["logprob"] - b["logprob"]) / a["n_tokens"]
                    for x, y in zip(got["bfloat16"], truth, strict=True)
                    for a, b in zip(x["outputs"], y["outputs"], strict=True)]
            pair_gaps = [abs(a[0] - b[0]) / (a[1] + b[1])
                         for x, y in zip(got["bfloat16"], truth, strict=True)
                         for a, b in combinations([(p["logprob"] - q["logprob"], p["n_tokens"])
                                                   for p, q in zip(x["outputs"], y["outputs"], strict=True)], 2)]
            figures[suite] = {
                "items": len(truth), "requests": requests,
                "seconds": {k: round(v, 2) for k, v in seconds.items()},
                "ratio_to_float32": {k: round(v / seconds["float32"], 2) for k, v in seconds.items()},
                "rescored_requests": rescored,
                "rescored_share": {k: round(v / requests, 4) for k, v in rescored.items()},
                "fragile": sum(bool(r.get("decision", {}).get("fragile")) for r in got["bfloat16"]),
                "flips_bf16": sum(x["label"] != y["label"] for x, y in zip(got["bfloat16"], truth, strict=True)),
                "flips_rescored": {k: sum(x["label"] != y["label"] for x, y in zip(got[k], truth, strict=True))
                                   for k in rescored},
                "max_gap_per_token": round(max(gaps), 5), "mean_gap_per_token": round(sum(gaps) / len(gaps), 5),
                "max_pair_gap_per_token": round(max(pair_gaps), 5),
                "flips_not_fragile": sum(x["label"] != y["label"] and not x.get("decision", {}).get("fragile")
                                         for x, y in zip(got["bfloat16"], truth, strict=True)),
                "by_bound": by_bound(got["bfloat16"], truth, precision.per_token if precision else None,
                                     max(pair_gaps)),
            }
            print(suite, json.dumps(figures[suite]), flush=True)
        figures["total_ratio_to_float32"] = {k: round(v / totals["float32"], 2) for k, v in totals.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(figures, indent=2) + "\n")
    print(json.dumps({"static_bound_per_token": figures["static_bound_per_token"],
                      "calibrated_bound_per_token": figures["calibrated_bound_per_token"],
                      "total_ratio_to_float32": figures["total_ratio_to_float32"]}))


if __name__ == "__main__":
    main()
