"""Human ratings as the reference for a model's answers (``lingdiag human compare``).

Each rater rated every variant of the items in their list (``export`` keeps an item's variants
together), so each rater has their own label per item: the gold rule applied to that rater's
ratings. Beside accuracy against the aggregated gold, this counts for every item how many of
its raters the model's answer disagrees with, and correlates the model's per-variant scores
(a ``Prediction.detail`` mapping such as ExpliCa's ``ratings`` or ``perplexity``) with the
human mean rating of each variant (Spearman).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lingdiag.human.export import Study
from lingdiag.human.gold import GoldRule
from lingdiag.human.importing import Responses
from lingdiag.metrics.stats import spearman
from lingdiag.records import ItemRecord


@dataclass(frozen=True, slots=True)
class ItemVsRaters:
    """One item: the model's answer against each rater's own label."""

    item_id: str
    model: str
    human: str
    """The gold rule over the mean ratings."""
    raters: int
    """Raters who rated every variant of the item."""
    disagree: int
    """Of those, raters whose own label differs from the model's answer."""


@dataclass(frozen=True, slots=True)
class ModelVsHuman:
    """One condition of a run against the human ratings."""

    condition: str
    n_items: int
    agreement_with_gold: float
    """Share of items whose model answer equals the human gold label."""
    mean_share_disagreeing: float
    """Mean over items of the share of raters the model's answer disagrees with."""
    items_most_raters_disagree: int
    """Items where more than half of the raters' own labels differ from the model's answer."""
    spearman: float | None
    """Model score vs human mean rating over (item, variant) rows; None without scores."""
    spearman_p: float | None
    n_scored: int
    items: Sequence[ItemVsRaters]


def compare(records: Sequence[ItemRecord], study: Study, responses: Responses, rule: GoldRule,
            score_key: str | None = None, lower_is_better: bool = False) -> list[ModelVsHuman]:
    """Compare each condition's answers with the raters (see the module docstring).

    Args:
        records: A run's item records (items are matched to the study by id).
        study: The study the responses answer.
        responses: The imported responses.
        rule: Turns mean or one rater's ratings per variant into a label.
        score_key: The ``detail`` mapping variant → model score to correlate; None skips it.
        lower_is_better: The score is better when lower (perplexity): its sign is flipped.
    """
    key = study.kind.scales[0].key
    stimuli = {s.id: s for s in study.stimuli if s.expected is None}
    variants: dict[str, list[str]] = {}
    for s in stimuli.values():
        variants.setdefault(s.item_id, []).append(s.variant)
    own: dict[str, dict[str, dict[str, float]]] = {}  # item → rater → variant → rating
    for a in responses.answers:
        if key in a.values:
            s = stimuli[a.stimulus]
            own.setdefault(s.item_id, {}).setdefault(a.rater, {})[s.variant] = a.values[key]
    means: dict[str, dict[str, float]] = {}
    for item_id, by_rater in own.items():
        for v in variants[item_id]:
            vals = [r[v] for r in by_rater.values() if v in r]
            if vals:
                means.setdefault(item_id, {})[v] = sum(vals) / len(vals)
    by_condition: dict[str, list[ItemRecord]] = {}
    for r in records:
        if r.error is None and r.item_id in means and len(means[r.item_id]) == len(variants[r.item_id]):
            by_condition.setdefault(r.condition, []).append(r)
    out = []
    for condition, recs in by_condition.items():
        items, xs, ys = [], [], []
        for r in recs:
            complete = [{v: rt[v] for v in variants[r.item_id]} for rt in own[r.item_id].values()
                        if all(v in rt for v in variants[r.item_id])]
            items.append(ItemVsRaters(r.item_id, r.label, rule.label(means[r.item_id]), len(complete),
                                      sum(rule.label(c) != r.label for c in complete)))
            scores = r.detail.get(score_key) if score_key else None
            if isinstance(scores, dict):
                for v, h in means[r.item_id].items():
                    if isinstance(scores.get(v), int | float):
                        xs.append(-float(scores[v]) if lower_is_better else float(scores[v]))
                        ys.append(h)
        rho = spearman(xs, ys)
        shares = [i.disagree / i.raters for i in items if i.raters]
        out.append(ModelVsHuman(
            condition, len(items), sum(i.model == i.human for i in items) / len(items),
            sum(shares) / len(shares) if shares else 0.0, sum(2 * i.disagree > i.raters for i in items if i.raters),
            None if rho is None else rho.r, None if rho is None else rho.p, len(xs),
            items))
    return out
