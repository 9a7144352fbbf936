"""The noise bound behind ``fragile``, measured for the model, dtype and device at hand.

A reduced dtype moves every log-prob; a decision between two texts of one item changes only if the two
moved apart by more than its margin. Calibration scores a fixed sample of such items (cause and effect
sentences joined by four connectives, as ExpliCa's; minimal pairs, as BLiMP's) in the reduced dtype and
in float32 with the same weights on the same device, and takes the largest relative move of two texts
of an item per scored token, ``|Δ_i − Δ_j| / (n_i + n_j)`` (``Δ``: reduced minus float32 log-prob),
times ``HEADROOM``. Why that is safe enough to mark fewer decisions fragile: the move of two texts is
the same arithmetic (one model, one dtype, one device's kernels) on texts of the same kind, and the
bound is twice the worst seen, not a typical value; what it can still miss (a text far outside the
sample's kind) is why ``rescore_fragile`` checks against float32 and ``bench/gpu.py`` counts flips
outside the fragile set. The margin measured (``bench/README.md``): SmolLM2 bf16 on a CPU calibrates
to 0.067 nat/token, 2.4× the largest pair move (0.028) over 200 official ExpliCa perplexity items, with
no flip outside the fragile set. The sample and the arithmetic are fixed, so the bound is deterministic for a
model, dtype and device; it is stored in the cache (``calibration/``) under the backend identity and
read back by later runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path
from typing import Any

from lingdiag.io.atomic import write_atomic
from lingdiag.io.paths import cache_dir
from lingdiag.records import LogLikelihood, LoglikelihoodRequest

HEADROOM = 2.0
"""The bound over the worst relative move seen in the sample. Not lower: on 200 official ExpliCa items the
worst real move was 0.85× the sample's, so without headroom the margin over what one suite did is 15%
(and a bound at that suite's own worst move, unknowable in advance, still marks a quarter of its
decisions fragile; ``bench/README.md``)."""
FLOOR = 0.005
"""Nats per token: the least bound, so that a sample on which the dtypes happen to agree closely does
not make every decision look safe."""
MAX_FILE = 4096
"""Bytes: a stored calibration is a few numbers."""

CAUSES = ("the road was icy", "the oven broke", "the shop closed early", "the river flooded the town",
          "the battery died", "the teacher praised her essay", "the wind knocked the fence down",
          "the meeting ran late", "the dog barked all night", "the price of bread doubled",
          "the printer jammed", "the match was cancelled")
EFFECTS = ("the car skidded off the bridge", "we ordered pizza instead", "they bought milk at the station",
           "the families moved to the hills", "the phone switched off", "she smiled for the rest of the day",
           "the sheep escaped into the lane", "he missed the last train", "nobody in the house slept",
           "people baked at home", "the report was printed by hand", "the fans went home")
CONNECTIVES = ("so", "because", "although", "and then")
PAIRS = (("The keys to the cabinet are on the table.", "The keys to the cabinet is on the table."),
         ("Who did the guests say the host invited?", "Who did the guests say that invited the host?"),
         ("Many girls insulted themselves.", "Many girls insulted herself."),
         ("The authors that the critic praised were happy.", "The authors that the critic praised was happy."),
         ("Every child has ever cried.", "No child has ever cried."),
         ("This pasta was eaten by the boys.", "This pasta was eaten the boys by."))


def sample() -> list[list[LoglikelihoodRequest]]:
    """The calibration items: each a list of the texts one decision compares."""
    joined = [[LoglikelihoodRequest("", f"{c[0].upper()}{c[1:]}, {k} {e}.") for k in CONNECTIVES]
              for c, e in zip(CAUSES, EFFECTS, strict=True)]
    crossed = [[LoglikelihoodRequest("", f"{c[0].upper()}{c[1:]} {k} {e}.") for k in CONNECTIVES]
               for c, e in product(CAUSES[:3], EFFECTS[-3:])]
    return joined + crossed + [[LoglikelihoodRequest("", t) for t in pair] for pair in PAIRS]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A measured noise bound: what ``models.base.Precision.per_token`` carries."""

    per_token: float
    """Nats per scored token: ``max(FLOOR, HEADROOM × worst)``."""
    worst: float
    """The largest ``|Δ_i − Δ_j| / (n_i + n_j)`` over the sample's pairs of texts."""
    pairs: int
    """Pairs of texts measured."""

    def recorded(self) -> dict[str, Any]:
        """For the stored file."""
        return {"per_token": self.per_token, "worst": self.worst, "pairs": self.pairs, "headroom": HEADROOM}


Scorer = Callable[[Sequence[LoglikelihoodRequest]], list[LogLikelihood]]


def measure(low: Scorer, float32: Scorer) -> Calibration:
    """The bound from scoring ``sample()`` with ``low`` (the reduced dtype) and ``float32``."""
    items = sample()
    flat = [r for item in items for r in item]
    a, b = low(flat), float32(flat)
    worst, pairs, k = 0.0, 0, 0
    for item in items:
        moves = [(a[k + j].logprob - b[k + j].logprob, a[k + j].n_tokens) for j in range(len(item))]
        k += len(item)
        for (di, ni), (dj, nj) in combinations(moves, 2):
            worst = max(worst, abs(di - dj) / (ni + nj))
            pairs += 1
    return Calibration(per_token=max(FLOOR, HEADROOM * worst), worst=worst, pairs=pairs)


def _path(identity: dict[str, str]) -> Path:
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / "calibration" / f"{key}.json"


def stored(identity: dict[str, str], low: Scorer, float32: Scorer) -> Calibration:
    """The calibration stored for ``identity`` (the reduced backend's), else measured now and stored."""
    path = _path(identity)
    if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_FILE:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Calibration(float(data["per_token"]), float(data["worst"]), int(data["pairs"]))
        except (ValueError, KeyError, TypeError, OSError):
            pass  # a damaged file is measured again and overwritten
    found = measure(low, float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(found.recorded(), sort_keys=True) + "\n")
    return found
