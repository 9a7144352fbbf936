"""ImperfectiveNLI ("The Imperfective Paradox in Large Language Models").

One package: ``files`` (the official file and the loader), ``data`` (the JSON and a
generator), ``prompts`` (§4.2 / Appendix B strategies),
``metrics`` (§4.3 and Appendix E: group accuracy, TBR_C eq. 1, Δ_AA eq. 2, the "False"
rate of Table 6, per telic verb class, Tables 7-18), ``tables``, ``figures``, ``analysis``
(§5.2-5.3 and footnote 4), ``similarity`` (§5.4) and ``cli`` (``lingdiag imperfective``).
This module registers the suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.analysis import competence
from lingdiag.prompts.loglik import GENERATE, LOGLIK, SCORING, SCORINGS, LabelLoglik, Normalisation, competence_axes
from lingdiag.records import ResultRow
from lingdiag.suite import Axis, Condition, Dataset, ItemView, Suite, lazy, register_suite
from lingdiag.suites.imperfective import analysis, data, figures, metrics, tables
from lingdiag.suites.imperfective.files import load
from lingdiag.suites.imperfective.prompts import STRATEGIES, PromptSource, parse_answer, strategy


class Options(BaseModel):
    """``-o`` options: the prompt texts, and the generation cap, overall and per strategy."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    prompt_source: PromptSource = "authors"
    """``authors``: the templates of the authors' ``run_inference.py`` as sent; ``paper``: Appendix B as printed."""
    max_new_tokens: int = Field(default=512, ge=1)
    """New tokens per answer (Appendix D: 512)."""
    max_new_tokens_zero_shot: int | None = Field(default=None, ge=1, alias="max_new_tokens_zero-shot")
    max_new_tokens_dap: int | None = Field(default=None, ge=1)
    max_new_tokens_cot: int | None = Field(default=None, ge=1)
    max_new_tokens_counterfactual: int | None = Field(default=None, ge=1)
    loglik_normalisation: Normalisation = "total"
    """How ``--scoring loglik`` compares the label words' log-likelihoods (``lingdiag.prompts.loglik``)."""

    def cap(self, name: str) -> int:
        """The cap of strategy ``name``: its own option if given, else ``max_new_tokens``."""
        own = {"zero-shot": self.max_new_tokens_zero_shot, "dap": self.max_new_tokens_dap,
               "cot": self.max_new_tokens_cot, "counterfactual": self.max_new_tokens_counterfactual}[name]
        return own if own is not None else self.max_new_tokens


ANSWERS = {label: label for label in data.LABELS}
"""The answer word of each label under ``--scoring loglik``: the bare label, as the P1/P2 prompts ask
("respond with ONLY one of ... "True", "False", or "Unknown"") and the parser's whole-answer rule reads."""


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options, seed: int) -> list[Condition]:
    """One condition per strategy, named by it (greedy decoding uses no seed), and with
    ``--scoring loglik`` its competence twin ``<strategy>/loglik`` (the label words scored after
    the same prompt).

    The prompt source is recorded in each condition's axes, so items and table rows name it;
    prompted conditions carry no ``scoring`` axis, so their records stay as before it existed.
    """
    source = options.prompt_source
    out = []
    for name in axes["strategy"]:
        prompt = strategy(name, options.cap(name), source)
        base = {"strategy": name, "prompt_source": source}
        for scoring in axes.get(SCORING, (GENERATE,)):  # callers from before the axis name no scoring
            if scoring == LOGLIK:
                norm = options.loglik_normalisation
                out.append(Condition(f"{name}/{LOGLIK}", {**base, **competence_axes(norm)},
                                     LabelLoglik(prompt, ANSWERS, norm), dataset.items))
            else:
                out.append(Condition(name, base, prompt, dataset.items))
    return out


def _analyses(rows: Sequence[ResultRow]) -> str:
    return analysis.report_section(rows) + "\n" + COMPETENCE(rows)


COMPETENCE = competence.report_section("ImperfectiveNLI")


SUITE = register_suite(Suite(
    name="imperfective",
    description="ImperfectiveNLI: teleological bias on telic/atelic progressives (groups A-D)",
    axes=(Axis("strategy", STRATEGIES, STRATEGIES, "prompt strategies of §4.2 / Appendix B"),
          Axis(SCORING, SCORINGS, (GENERATE,), "generate: the prompted answer; loglik: the label word with the "
               "highest log-likelihood after the same prompt (competence; lingdiag competence RUN joins them)")),
    load=load,
    conditions=conditions,
    metrics=metrics.metrics,
    table=tables.table,
    labels=data.LABELS,
    options=Options,
    stat_tags=("group", "verb_class"),
    view=ItemView(("premise", "hypothesis"), "gold"),
    build=data.build,
    figures=figures.figures,
    analyses=_analyses,
    cli=lazy("lingdiag.suites.imperfective.cli", "app"),
    parse_answer=parse_answer,
    paired_metrics=metrics.PAIRED,
    headline=metrics.HEADLINE,
    headline_label="TBR_C (↓): teleological bias rate, group C",
    competence=competence.join,
))
