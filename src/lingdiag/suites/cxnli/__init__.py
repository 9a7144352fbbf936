"""CxNLI ("Beyond Memorization: Assessing Semantic Generalization in LLMs Using Phrasal
Constructions", Scivetti et al.).

Exp 1 (CxNLI, §4) and Exp 2 (CxNLI-Distinction, §5) are the ``exp`` axis. Settings (§4.3,
§5.3): zero-shot, or in-context examples from CxNLI (the examples of the item's own
construction form, as in the authors' scripts) or from SNLI, one or three premises with
their three hypotheses each. Prompts: the numeric-coding variations and rephrasings of
Appendix E, user variants from a file, and chain-of-thought (Appendix F); by default the
texts, formatting and in-context examples of the authors' code (``-o prompt_source``). Metrics: accuracy
overall, per construction (Figure 1) and per label with F1, and the Exp 1 vs Exp 2 table
(Table 1) beside the human agreement of Table 7.

Modules: ``files`` (official files, axis values, loader), ``data`` (the triples), ``templates``
(templatic hypotheses from annotated premises), ``prompts`` (Appendix E/F prompts), ``authors``
(the authors' prompts), ``parse`` (the answer's relation), ``metrics``, ``tables``, ``figures``
and ``cli`` (``lingdiag cxnli generate``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.analysis import competence
from lingdiag.errors import ConfigError
from lingdiag.prompts.loglik import GENERATE, LOGLIK, SCORING, SCORINGS, LabelLoglik, Normalisation, competence_axes
from lingdiag.suite import Axis, Condition, Dataset, Suite, lazy, register_suite
from lingdiag.suites.cxnli import authors, data, figures, metrics, prompts, tables
from lingdiag.suites.cxnli.authors import AUTHORS, AuthorsPrompt
from lingdiag.suites.cxnli.data import LABELS
from lingdiag.suites.cxnli.files import EXPS, SETTINGS, load
from lingdiag.suites.cxnli.parse import parse_answer
from lingdiag.suites.cxnli.prompts import DEFAULT_VARIANT, USER, VARIANTS, CxnliPrompt, user_variants


class Options(BaseModel):
    """``-o`` options of CxNLI."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_source: Literal["authors", "paper"] = AUTHORS
    """``authors``: the texts, formatting and example choice of the authors' code
    (``prompts_authors.yaml``, :mod:`.authors`); ``paper``: the Appendix E texts with this
    project's rephrasings and formatting (``prompts.yaml``). Recorded as an axis."""
    variants: str | None = None
    """A YAML/JSON file of user prompt variants (with ``--variant user``)."""
    max_new_tokens: int = Field(default=16, ge=1)
    """New tokens per answer without CoT."""
    max_new_tokens_cot: int = Field(default=256, ge=1)
    """New tokens per answer with CoT."""
    reasoning: bool = False
    """A reasoning model (o1-preview, o3, ...): ``max_new_tokens_reasoning`` per answer, CoT
    or not, and no stop sequences (such models reject them and spend tokens on hidden
    reasoning). Sampling is the backend's: as the authors ran o1-preview (temperature 1,
    seed 43; the openai backend otherwise sends temperature 0, which o1 models reject), run
    ``-m openai:o1-preview-2024-09-12 -o reasoning=true --model-option 'extra_body={"temperature": 1}'
    --model-option seed=43 --model-option logprobs=false``. Not an axis: it changes no prompt."""
    max_new_tokens_reasoning: int = Field(default=32768, ge=1)
    """New tokens per answer with ``reasoning`` (the authors set no cap)."""
    loglik_normalisation: Normalisation = "total"
    """How ``--scoring loglik`` compares the codes' log-likelihoods (``lingdiag.prompts.loglik``)."""


ANSWERS = {label: code for code, label in data.CODES.items()}
"""The answer of each label under ``--scoring loglik``: its numeric code, as every Appendix E
variation asks ("Output a single numerical value between 0, 1, or 2", Table 11) and the parser
reads (a user variant asking for words would need its own answers)."""


def _variants(selected: Sequence[str], options: Options) -> dict[str, str]:
    authors_source = options.prompt_source == AUTHORS
    texts = authors.prompts()["variants"] if authors_source else prompts.prompts()["variants"]
    unknown = [v for v in selected if v != USER and v not in texts]
    if unknown:
        raise ConfigError(f"variant {', '.join(unknown)} is not a prompt of -o prompt_source={options.prompt_source}; "
                          f"its variants: {', '.join(texts)}")
    out = {v: texts[v] for v in selected if v != USER}
    if USER in selected:
        if options.variants is None:
            raise ConfigError("--variant user needs the variants file: -o variants=FILE")
        # The authors' instructions end in a newline (a blank line follows them).
        out.update({k: t + "\n" if authors_source else t for k, t in user_variants(options.variants).items()})
    elif options.variants is not None:
        raise ConfigError("-o variants=FILE is given but not selected: add --variant user")
    return out


def _instruction(vname: str, text: str, cot: bool, options: Options) -> str:
    """The instruction; under CoT with the authors' prompts, the variant's CoT text."""
    if not cot or options.prompt_source != AUTHORS or vname.startswith(f"{USER}:"):
        return text
    cot_texts = authors.prompts()["cot"]
    if vname not in cot_texts:
        raise ConfigError(f"the authors have no chain-of-thought prompt for {vname}; "
                          f"--cot on needs --variant {' or '.join(cot_texts)} (or -o prompt_source=paper)")
    return str(cot_texts[vname])


def _strategy(dataset: Dataset, exp: str, setting: str, instruction: str, cot: bool, options: Options) -> CxnliPrompt:
    if options.reasoning:
        budget: dict[str, Any] = {"max_new_tokens": options.max_new_tokens_reasoning, "stop": ()}
    else:
        budget = {"max_new_tokens": options.max_new_tokens_cot if cot else options.max_new_tokens}
    if options.prompt_source == AUTHORS:
        a = authors.prompts()
        ordered = () if setting == "zero" else dataset.extras["authors_pools"][exp][setting]
        return AuthorsPrompt(instruction, a["example"], a["question"], {}, cot=cot, numbered=authors.number(ordered),
                             raw=dataset.extras.get("raw", {}), snli=setting.endswith("snli"), **budget)
    p = prompts.prompts()
    pool = {} if setting == "zero" else dataset.extras["pools"][exp][setting]
    return CxnliPrompt(instruction, p["example"], p["question_cot" if cot else "question"], pool,
                       by_schema=setting.endswith("cxnli"), cot=cot, **budget)


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options, seed: int) -> list[Condition]:
    """One condition per exp × setting × variant × cot (greedy decoding uses no seed)."""
    variants = _variants(axes["variant"], options)
    out = []
    for exp in axes["exp"]:
        items = [it for it in dataset.items if it.tags["exp"] == exp]
        if not items:
            continue
        for setting in axes["setting"]:
            for vname, text in variants.items():
                for cot in axes["cot"]:
                    on = cot == "on"
                    strategy = _strategy(dataset, exp, setting, _instruction(vname, text, on, options), on, options)
                    name = f"exp{exp}/{setting}/{vname}" + ("/cot" if on else "")
                    base = {"exp": exp, "setting": setting, "variant": vname, "cot": cot,
                            "prompt_source": options.prompt_source}
                    for scoring in axes.get(SCORING, (GENERATE,)):  # callers from before the axis
                        if scoring == LOGLIK:  # the competence twin: the codes scored after the same prompt
                            norm = options.loglik_normalisation
                            out.append(Condition(f"{name}/{LOGLIK}", {**base, **competence_axes(norm)},
                                                 LabelLoglik(strategy, ANSWERS, norm), items))
                        else:
                            out.append(Condition(name, base, strategy, items))
    if not out:
        raise ConfigError(f"dataset {dataset.name!r} has no items for exp {', '.join(axes['exp'])}")
    return out


SUITE = register_suite(Suite(
    name="cxnli",
    description="CxNLI: constructional NLI, Exp 1 (entrenched) vs Exp 2 (syntactically identical)",
    axes=(
        Axis("exp", EXPS, EXPS, "1: CxNLI (§4), 2: CxNLI-Distinction (§5)"),
        Axis("setting", SETTINGS, SETTINGS, "in-context examples: none, or 1/3 premises from CxNLI or SNLI"),
        Axis("variant", (*dict.fromkeys((*VARIANTS[:-1], *authors.VARIANTS)), USER), (DEFAULT_VARIANT,),
             "prompts of -o prompt_source (authors: prompts_authors.yaml; paper: Appendix E + rephrasings); "
             "'user' = -o variants=FILE"),
        Axis("cot", ("off", "on"), ("off",), "chain-of-thought (Appendix F): reasoning, answer on the last line"),
        Axis(SCORING, SCORINGS, (GENERATE,), "generate: the prompted answer; loglik: the code with the highest "
             "log-likelihood after the same prompt (competence; lingdiag competence RUN joins them)"),
    ),
    load=load,
    conditions=conditions,
    metrics=metrics.metrics,
    table=tables.table,
    labels=LABELS,
    options=Options,
    stat_tags=("exp", "construction", "schema", "kind"),
    figures=figures.figures,
    analyses=competence.report_section("CxNLI"),
    cli=lazy("lingdiag.suites.cxnli.cli", "app"),
    parse_answer=parse_answer,
    paired_metrics=metrics.PAIRED,
    headline=metrics.HEADLINE,
    headline_label="Accuracy (↑)",
    competence=competence.join,
))
