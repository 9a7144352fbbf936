"""Coverage and bias of ``lingdiag items estimate`` on synthetic panels where every accuracy is known.

For each panel (``--panels`` of them, seeded): 150 items of a 2PL (slopes lognormal(0, 0.3),
difficulties N(0, 1)), ``--models`` models of ability N(0, 1) answer them; ``items anchors`` (30
anchors, the item model ``items fit`` chooses, the error measured by leaving models out) is made from
their answers; ``--new`` new models from the same population answer the anchors, and each one's 95%
interval is checked against its accuracy on every fitted item. Prints the coverage with its binomial
standard error, by method (IRT anchors or random items) and by the new model's true ability (the bias
of models far from the fitted ones).

    python bench/items_coverage.py --models 10 [--panels 20] [--new 200]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from lingdiag.items.anchors import ESTIMATES, anchor_cells
from lingdiag.items.fitted import fit_cells
from lingdiag.items.matrix import ResponseMatrix

ITEMS, ANCHORS = 150, 30
BANDS = ((-9.0, -1.5), (-1.5, -1.0), (-1.0, 1.0), (1.0, 1.5), (1.5, 9.0))
"""Bands of the new models' true ability the bias is shown by."""


def panel(models: int, seed: int, new: int) -> list[tuple[float, float, float, float, float, bool]]:
    """(true ability, accuracy, estimate, low, high, IRT method) of each new model of one panel."""
    rng = np.random.default_rng(1000 * models + seed)
    a, b = rng.lognormal(0, 0.3, ITEMS), rng.normal(size=ITEMS)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        theta = rng.normal(size=n)
        return theta, (rng.random((n, ITEMS)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(np.int8)

    _, x = draw(models)
    m = ResponseMatrix("s", "c", tuple(f"m{k}" for k in range(models)), tuple(f"i{j}" for j in range(ITEMS)), x)
    (cell,) = anchor_cells(fit_cells([m]), ANCHORS).cells
    anchors = [int(j) for j in cell.anchors.index]
    column = [int(i[1:]) for i in cell.item_ids]
    out = []
    for theta, row in zip(*draw(new), strict=True):
        est = ESTIMATES[cell.method](cell, {k: bool(row[column[k]]) for k in anchors})
        out.append((float(theta), float(row[column].mean()), est.estimate, est.low, est.high, cell.method == "irt"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--panels", type=int, default=20)
    parser.add_argument("--new", type=int, default=200)
    args = parser.parse_args()
    rows = np.array([r for seed in range(args.panels) for r in panel(args.models, seed, args.new)], float)
    theta, acc, est, low, high, irt = rows.T
    covered = (low <= acc) & (acc <= high)

    def line(name: str, where: np.ndarray) -> str:
        p, n = covered[where].mean(), int(where.sum())
        return (f"{name}: coverage {p:.3f} ± {math.sqrt(p * (1 - p) / n):.3f} (n = {n}), mean width "
                f"{np.mean(high[where] - low[where]):.3f}, bias {np.mean(est[where] - acc[where]):+.4f}")

    print(f"{args.models} models, {args.panels} panels × {args.new} new models")
    print(line("all", np.ones(len(rows), bool)))
    print(line("IRT anchors", irt == 1))
    print(line("random items", irt == 0))
    for lo, hi in BANDS:
        print(line(f"IRT, true ability in [{lo:g}, {hi:g})", (irt == 1) & (theta >= lo) & (theta < hi)))


if __name__ == "__main__":
    main()
