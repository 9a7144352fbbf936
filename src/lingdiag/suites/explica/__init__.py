"""ExpliCa: explicit causal and temporal relations (so / because / then / after).

Tasks (§4, Appendix E): acceptability rating (1-10) of each of the four joined
sentences, cloze (name the masked connective), multiple choice (letter A-D) and
perplexity (the joined sentence with the lowest per-token perplexity gives the
prediction: APS). Prompting tasks run zero-shot or with one example per connective, with
greedy decoding plus the answer cleaning of Appendix D, or with constrained decoding that
can only produce a valid answer (the paper used Outlines; lingdiag uses xgrammar).

Metrics (§5, Appendix G-I): accuracy over causal and temporal pairs, overall and per
TYPE × ORDER (Tables 6-9), confusion matrices (Fig. 12), accuracy per frequency bin when
the data has one (Table 10), Spearman correlation of model ratings (and perplexities)
with the human mean ratings per class and on UNRELATED pairs (Table 13), and the rating
distributions of model and humans (Fig. 5).

Choices made where the paper is silent, all recorded per item in ``detail``:
- Rating ties: the highest rating wins and ties are broken in the order because, so,
  after, then, as the gold labels are (and as the authors' ``idxmax`` did);
  ``-o ties=miss`` counts a tie as a miss instead. Missing ratings are -1; a pair with
  no rating at all is unparsed.
- Prompts (``-o prompt_source``): ``authors`` (default) sends the prompts as the authors ran
  them, raw text without a chat template and 5 new tokens (their API runs used 50: pass
  ``-o max_new_tokens=50``), replayed per row from their result files where fetched, else
  the same template with a seeded connective order; ``paper`` sends lingdiag's variants.
  The axes ``prompt_source`` and ``prompt_text`` (replayed/seeded) name which.
- Shuffles (few-shot example order, cloze choice order, MC option order) use
  ``random.Random(f"{seed}:{item id}:<what>")``: deterministic per seed and independent of
  ``--limit`` and item order.

Modules: ``files`` (the official file, loader), ``data`` (items), ``options`` (``-o``),
``prompts`` and ``tasks`` (the four tasks as strategies), ``parse`` (cloze answers), ``rules``
(a connective from four scores), ``metrics``, ``tables``, ``figures``, ``analysis`` (competence
vs performance), ``importing`` (outside answers as records), ``reproduce`` (published outputs
re-scored) and ``cli`` (``lingdiag explica``, ``lingdiag score explica``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.records import Item
from lingdiag.suite import Axis, Condition, Dataset, ItemView, RatingLayout, Suite, lazy, register_suite
from lingdiag.suites.explica import analysis, data, figures, metrics, tables
from lingdiag.suites.explica.files import load
from lingdiag.suites.explica.options import Options
from lingdiag.suites.explica.prompts import DECODINGS, SHOTS, TASKS
from lingdiag.suites.explica.tasks import strategy


def _prompt_axes(strat: Any, items: Sequence[Item], options: Options) -> dict[str, str]:
    """``prompt_source``, and under ``authors`` whether the prompts were ``replayed`` from the
    published result file, ``seeded`` or both (``replayed+seeded``; each item's ``origin`` says).
    """
    if not options.authors:
        return {"prompt_source": options.prompt_source}
    seen = sorted({strat.origin(it) for it in items})
    return {"prompt_source": options.prompt_source, "prompt_text": "+".join(seen)}


def _rule_axes(task: str, decoding: str, options: Options) -> dict[str, str]:
    """The rating task's tie and missing-rating rules and the constrained decoder's sampling: they
    move published numbers, so the records and tables name them.
    """
    axes: dict[str, str] = {"ties": options.ties, "missing_ratings": options.missing_ratings} if task == "rating" \
        else {}
    if decoding == "constrained":
        axes["constrained_sampling"] = options.constrained_sampling
    return axes


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options, seed: int) -> list[Condition]:
    """Task × shots × decoding; perplexity has neither shots nor decoding (nor prompts), so it runs once."""
    out = []
    for task in axes["task"]:
        if task == "perplexity":
            out.append(Condition("perplexity", {"task": "perplexity"}, strategy("perplexity"), dataset.items))
            continue
        for shots in axes["shots"]:
            for decoding in axes["decoding"]:
                strat = strategy(task, int(shots), decoding, options, seed)
                out.append(Condition(f"{task}/{shots}-shot/{decoding}",
                                     {"task": task, "shots": shots, "decoding": decoding,
                                      **_prompt_axes(strat, dataset.items, options),
                                      **_rule_axes(task, decoding, options)},
                                     strat, dataset.items))
    return out


SUITE = register_suite(Suite(
    name="explica",
    description="ExpliCa: causal vs temporal connectives (so/because/then/after), prompting vs perplexity",
    axes=(Axis("task", TASKS, TASKS, "rating, cloze, mc (§4 prompting tasks) and perplexity (APS)"),
          Axis("shots", SHOTS, SHOTS, "0: zero-shot; 1: one example per connective"),
          Axis("decoding", DECODINGS, DECODINGS, "greedy + Appendix D cleaning, or constrained (xgrammar)")),
    load=load,
    conditions=conditions,
    metrics=metrics.metrics,
    table=tables.table,
    options=Options,
    stat_tags=("relation", "type", "order", "additional_dimension"),
    figures=figures.figures,
    analyses=analysis.report_section,
    view=ItemView(("sentence_a", "sentence_b"), "relation", "sentences",
                  RatingLayout(("Sentence_A", "Sentence_B"), data.RATING_COLUMNS,
                               {"pair_id": "pair_id", "additional_dimension": "additional_dimension"})),
    cli=lazy("lingdiag.suites.explica.cli", "app"),
    score_cli=lazy("lingdiag.suites.explica.cli", "score"),
    reproduce_cli=lazy("lingdiag.suites.explica.cli", "reproduce"),
    paired_metrics=metrics.PAIRED,
    headline=metrics.HEADLINE,
    headline_label="Accuracy (↑)",
    competence=analysis.join,
))
