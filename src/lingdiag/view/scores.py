"""What a record's scores say, for the item pages: each scored request's log-probability, the margin
between the best two where the label is the choice among them (minimal pairs, label log-likelihood),
and SyntaxGym's predictions where formulas over region surprisals decided it (there a "margin" between
the best two sentences means nothing, so none is shown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lingdiag.prompts.surprisal import SURPRISAL
from lingdiag.records import ItemRecord, ScoreOutput

PREDICTIONS = "predictions"
"""A formula suite's detail and fields: each prediction's formula (fields) and whether it held (detail)."""


@dataclass(frozen=True, slots=True)
class Scores:
    """A record's log-probabilities and how its label was decided from them."""

    logprobs: tuple[tuple[int, float], ...]
    """(request index, log-prob) of each scored request."""
    margin: float | None
    """Best minus second-best log-prob where the label is the choice among them; None otherwise."""

    @property
    def signed(self) -> float | None:
        """The margin signed by the grade: + the chosen text's lead when right, − when wrong (for two texts,
        the gold text's log-prob minus the other's); None without a margin or a grade.
        """
        if self.margin is None or self.correct is None:
            return None
        return self.margin if self.correct else -self.margin
    predictions: tuple[tuple[str, bool | None], ...]
    """(formula, held) where formulas over region surprisals decided the label (SyntaxGym)."""
    correct: bool | None = None
    """The record's grade (None: no gold label, or a backend error)."""


def by_formula(r: ItemRecord) -> bool:
    """Whether ``r``'s label was decided by formulas over region surprisals, not by a choice among texts."""
    return SURPRISAL in r.detail or PREDICTIONS in r.detail


def scores(r: ItemRecord) -> Scores:
    """``r``'s scores (see :class:`Scores`)."""
    logprobs = tuple((k, o.logprob) for k, o in enumerate(r.outputs)
                     if isinstance(o, ScoreOutput) and o.logprob is not None)
    predictions: tuple[tuple[str, bool | None], ...] = ()
    margin = None
    if by_formula(r):
        held = r.detail.get(PREDICTIONS)
        formulas = r.fields.get(PREDICTIONS)
        results = list(held) if isinstance(held, Sequence) and not isinstance(held, str) else []
        names = [str(_formula(f)) for f in formulas] if isinstance(formulas, Sequence) and \
            not isinstance(formulas, str) else []
        predictions = tuple((names[k] if k < len(names) else f"prediction {k + 1}",
                             v if isinstance(v, bool) else None) for k, v in enumerate(results))
    elif len(logprobs) > 1:
        ranked = sorted((v for _, v in logprobs), reverse=True)
        margin = ranked[0] - ranked[1]
    return Scores(logprobs, margin, predictions, None if r.error is not None else r.correct)


def _formula(value: object) -> object:
    """A prediction as a suite file holds it: its formula text (``{"formula": ...}``) or the text itself."""
    return value.get("formula", value) if isinstance(value, Mapping) else value
