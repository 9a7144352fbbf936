"""How a connective is chosen from four rating or perplexity scores: the authors' rules by
default, each a named option (``-o ties=…``, ``-o missing_ratings=…``).

The authors' notebooks (../shared/reference/explica/analysis/greedy_accuracy.py,
``get_model_max_rating_cat``) sort a pair's four rows by connective and take the first
``idxmax`` of the cleaned rating, with an unreadable rating stored as -1. So a tie goes to the
alphabetically first connective, and -1 competes like any rating: a pair with four unreadable
answers is scored "after". With these rules the published rating files reproduce every
acceptability cell of Tables 6-7 (../shared/notes/fidelity.md).

We think ``missing_ratings=drop`` is the better rule for new work: an unreadable answer is
then no evidence for any connective and a pair without a readable rating is ``unparsed``
rather than "after". ``ties=miss`` goes further and counts a tie as a miss. ``gold-order``
breaks ties in the order the human side uses (``data.TIE_ORDER``), lingdiag's rule before the
authors' code was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lingdiag.records import UNPARSED
from lingdiag.suites.explica import data

Ties = Literal["alphabetical", "gold-order", "miss"]
MissingRatings = Literal["keep", "drop"]
TIE = "tie"
"""The label of a rating tie under ``ties=miss``."""
MISSING = -1
"""An unreadable rating, as the authors stored it."""


@dataclass(frozen=True, slots=True)
class RatingRule:
    """The tie and missing-rating rules of the rating task."""

    ties: Ties = "alphabetical"
    missing: MissingRatings = "keep"

    def choose(self, ratings: Mapping[str, float]) -> tuple[str, bool]:
        """The chosen connective (or ``tie`` / ``unparsed``) and whether the top was tied."""
        # NaN (an empty cell of an imported file) is no rating at all, under either rule.
        scored = {c: v for c, v in ratings.items() if v == v and (self.missing == "keep" or v != MISSING)}
        if not scored:
            return UNPARSED, False
        top = max(scored.values())
        tied = sum(v == top for v in scored.values()) > 1
        if tied and self.ties == "miss":
            return TIE, True
        order = data.ALPHABETICAL if self.ties == "alphabetical" else data.TIE_ORDER
        return data.best(scored, order=order), tied

    def describe(self) -> str:
        """One line for table headers."""
        return f"ties {self.ties}, unreadable ratings (-1) {'kept in' if self.missing == 'keep' else 'left out of'} " \
               "the argmax"


def lowest(scores: Mapping[str, float]) -> str:
    """The connective with the lowest perplexity, ties alphabetical (the notebooks' ``idxmin``)."""
    return data.best(scores, lower_is_better=True, order=data.ALPHABETICAL)
