"""The steering-coefficient sweep as a figure: the headline metric and the label shares against α."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lingdiag.adapt.rediagnosis import SweepPoint
from lingdiag.figures import Figure, pyplot, to_png


def sweep_figure(vector: str, points: Sequence[SweepPoint], headline: str) -> Figure:
    """Two panels over α, one line per condition: ``headline`` (with its 95% interval where the
    suite gives one) and the share of answers per label (``False``, ``True``, ``UNPARSED``...).

    Args:
        vector: The vector's label (hash and layers), for the title.
        points: The sweep's points (every condition at every coefficient).
        headline: The metric key plotted in the first panel.

    Returns:
        The figure as PNG.
    """
    plt = pyplot()
    conditions = list(dict.fromkeys(p.condition for p in points))
    labels = sorted({lab for p in points for lab in p.shares})
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    styles = ["-", "--", ":", "-."]
    for k, condition in enumerate(conditions):
        mine = sorted((p for p in points if p.condition == condition), key=lambda p: p.alpha)
        alphas = [p.alpha for p in mine]
        values = [p.headline for p in mine]
        low = [v - p.headline_ci[0] if p.headline_ci else 0.0 for v, p in zip(values, mine, strict=True)]
        high = [p.headline_ci[1] - v if p.headline_ci else 0.0 for v, p in zip(values, mine, strict=True)]
        left.errorbar(alphas, values, yerr=[low, high], marker="o", capsize=3, label=condition,
                      linestyle=styles[k % len(styles)])
        for label in labels:
            right.plot(alphas, [p.shares.get(label, 0.0) for p in mine], marker="o",
                       linestyle=styles[k % len(styles)], label=f"{label} ({condition})")
    left.set(xlabel="steering coefficient α", ylabel=headline, title=headline, ylim=(-0.02, 1.02))
    right.set(xlabel="steering coefficient α", ylabel="share of answers", title="answers by label",
              ylim=(-0.02, 1.02))
    left.legend(fontsize=7)
    right.legend(fontsize=6, ncol=max(1, math.ceil(len(labels) * len(conditions) / 8)))
    fig.suptitle(f"steering sweep, vector {vector}", fontsize=9)
    return Figure(f"Steering sweep ({vector})", to_png(fig),
                  f"{headline} (95% interval) and the share of answers per label against α; α=0 is the base model.")
