"""Region surprisal and SyntaxGym predictions: each sentence variant of an item (a SyntaxGym
"condition") scored token by token under a scoring policy, its regions' surprisals summed
(``lingdiag.prompts.regions``), and the item's prediction formulas (``lingdiag.prompts.formulas``) checked.
The built-in ``syntaxgym`` suite and suite files' ``regions`` formulation both use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lingdiag.prompts import regions
from lingdiag.prompts.formulas import ALL_REGIONS, Formula
from lingdiag.records import UNPARSED, LogLikelihood, LoglikelihoodRequest, Prediction, Request, Response
from lingdiag.scoring import ScoringPolicy

PASS, FAIL = "pass", "fail"
LABELS = (PASS, FAIL)
SURPRISAL = "surprisal_bits"
"""Prediction detail key: SyntaxGym condition → its regions' surprisals (bits, region order)."""
PREDICTIONS = "predictions"
"""Prediction detail key: whether each prediction held, in formula order."""


def region_requests(conditions: Mapping[str, Sequence[str]], policy: ScoringPolicy,
                    separator: str = " ") -> list[Request]:
    """One per-token request per condition (its regions joined by ``separator``), in order."""
    return [LoglikelihoodRequest("", regions.join(contents, separator).text, policy=policy, per_token=True)
            for contents in conditions.values()]


def recorded_surprisals(detail: Mapping[str, object]) -> dict[tuple[str, str], float] | None:
    """``(region number or "*", condition)`` → surprisal from a recorded prediction's detail, its
    regions numbered 1, 2, … in order (a suite file's ``regions``); None when it holds none.
    For formulas evaluated from records, after the run.
    """
    by_condition = detail.get(SURPRISAL)
    if not isinstance(by_condition, Mapping):
        return None
    out: dict[tuple[str, str], float] = {}
    for cond, values in by_condition.items():
        for k, v in enumerate(values):
            out[(str(k + 1), cond)] = float(v)
        out[(ALL_REGIONS, cond)] = float(sum(values))
    return out


def predict(conditions: Mapping[str, Sequence[str]], numbers: Mapping[str, Sequence[str]],
            formulas: Sequence[Formula], policy: ScoringPolicy, responses: Sequence[Response],
            separator: str = " ") -> Prediction:
    """``pass`` when every formula holds, with the region surprisals (bits) and each outcome.

    Args:
        conditions: Condition → its regions' contents, in region order (as rendered).
        numbers: Condition → its regions' numbers, in the same order.
        formulas: The item's predictions.
        policy: The policy the requests were scored under (for its whitespace correction).
        responses: One per-token log-likelihood per condition, in ``conditions`` order.
        separator: What the regions were joined by (``""`` in a script without spaces).
    """
    surprisal: dict[tuple[str, str], float] = {}
    by_condition: dict[str, list[float]] = {}
    lls = [r for r in responses if isinstance(r, LogLikelihood)]
    for (cond, contents), r in zip(conditions.items(), lls, strict=True):
        if r.token_logprobs is None or r.token_spans is None:
            return Prediction(UNPARSED, {"reason": "the backend returned no per-token log-probs"})
        joined = regions.join(contents, separator)
        values = regions.surprisals(joined, r.token_spans, r.token_logprobs,
                                    r.word_start_logprobs if policy.whitespace_correction else None)
        by_condition[cond] = [round(v, 6) for v in values]
        for number, v in zip(numbers[cond], values, strict=True):
            surprisal[(number, cond)] = v
        surprisal[(ALL_REGIONS, cond)] = sum(values)
    outcomes = [f(surprisal) for f in formulas]
    return Prediction(PASS if all(outcomes) else FAIL, {PREDICTIONS: outcomes, SURPRISAL: by_condition})
