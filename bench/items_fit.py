"""The item model's fit at the issue's scale: 100 models × 70,000 items (5% of answers missing),
drawn from a 2PL, fitted as ``lingdiag items fit`` fits a cell (``lingdiag.items.irt.fit``: EM,
abilities, standard errors). Prints the seconds of each model (1PL and 2PL), peak memory, the ratio
to the 60 s target, and, as an outside baseline in the same command, girth's 1PL MML
(``girth.onepl_mml``, the dev extra) on a tenth as many items with none missing, against lingdiag's 1PL
on the same.

    python bench/items_fit.py [--models 100] [--items 70000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from lingdiag.items import irt

TARGET_S = 60.0


def answers(models: int, items: int, seed: int = 0, missing: float = 0.05) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=models)
    a, b = rng.lognormal(0, 0.3, size=items), rng.normal(size=items)
    x = np.empty((models, items), dtype=np.int8)
    for lo in range(0, items, 10_000):  # in slices: the float probabilities of all 7M answers are 56 MB each
        hi = min(items, lo + 10_000)
        p = 1 / (1 + np.exp(-(a[lo:hi] * (theta[:, None] - b[lo:hi]))))
        x[:, lo:hi] = rng.random((models, hi - lo)) < p
    x[rng.random(x.shape) < missing] = -1
    return x


def timed(x: np.ndarray, kind: irt.Kind) -> tuple[float, irt.Estimates]:
    started = time.perf_counter()
    est = irt.fit(x, kind)
    return time.perf_counter() - started, est


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--items", type=int, default=70_000)
    args = parser.parse_args()
    x = answers(args.models, args.items)
    s2, e2 = timed(x, "2pl")
    s1, e1 = timed(x, "1pl")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"items_fit: {args.models} models × {args.items} items: 2PL {s2:.1f} s ({e2.iterations} EM iterations), "
          f"1PL {s1:.1f} s ({e1.iterations}); peak RSS {peak_mb:.0f} MB")
    line = f"bench: items_fit_2pl_s={s2:.1f} items_fit_1pl_s={s1:.1f} target_s={TARGET_S:.0f} " \
           f"ratio_to_target={max(s1, s2) / TARGET_S:.2f}"
    try:
        import girth
    except ImportError:
        print("girth not installed (the dev extra): no outside baseline")
        print(line)
        return
    # girth takes complete answers with both outcomes per item: a tenth of the items, none missing.
    tenth = answers(args.models, args.items // 10, seed=1, missing=0.0)
    tenth = np.ascontiguousarray(tenth[:, ((tenth == 1).sum(0) > 0) & ((tenth == 0).sum(0) > 0)])
    started = time.perf_counter()
    girth.onepl_mml(tenth.T.astype(int))
    g = time.perf_counter() - started
    ours, _ = timed(tenth, "1pl")
    print(f"girth onepl_mml on {tenth.shape[1]} items: {g:.1f} s; lingdiag 1PL on the same: {ours:.1f} s")
    print(line + f" girth_1pl_tenth_s={g:.1f} lingdiag_1pl_tenth_s={ours:.1f} speedup_vs_girth={g / ours:.1f}")


if __name__ == "__main__":
    main()
