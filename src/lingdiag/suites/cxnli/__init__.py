"""CxNLI ("Beyond Memorization: Assessing Semantic Generalization in LLMs Using Phrasal
Constructions", Scivetti et al.).

Exp 1 (CxNLI, §4) and Exp 2 (CxNLI-Distinction, §5) are the ``exp`` axis. Settings (§4.3,
§5.3): zero-shot, or in-context examples from CxNLI (the examples of the item's own
construction form, as in the authors' scripts) or from SNLI, one or three premises with
their three hypotheses each. Prompts: the numeric-coding variations and rephrasings of
Appendix E, user variants from a file, and chain-of-thought (Appendix F). Metrics: accuracy
overall, per construction (Figure 1) and per label with F1, and the Exp 1 vs Exp 2 table
(Table 1) beside the human agreement of Table 7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.errors import ConfigError
from lingdiag.suite import Axis, Condition, Dataset, Suite, register_suite
from lingdiag.suites.cxnli import metrics, prompts, tables
from lingdiag.suites.cxnli.files import EXPS, SETTINGS, load
from lingdiag.suites.cxnli.prompts import DEFAULT_VARIANT, USER, VARIANTS, CxnliPrompt, user_variants


class Options(BaseModel):
    """``-o`` options of CxNLI."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    variants: str | None = None
    """A YAML/JSON file of user prompt variants (with ``--variant user``)."""
    max_new_tokens: int = Field(default=16, ge=1)
    """New tokens per answer without CoT."""
    max_new_tokens_cot: int = Field(default=256, ge=1)
    """New tokens per answer with CoT."""


def _variants(selected: Sequence[str], options: Options) -> dict[str, str]:
    texts = prompts.prompts()["variants"]
    out = {v: texts[v] for v in selected if v != USER}
    if USER in selected:
        if options.variants is None:
            raise ConfigError("--variant user needs the variants file: -o variants=FILE")
        out.update(user_variants(options.variants))
    elif options.variants is not None:
        raise ConfigError("-o variants=FILE is given but not selected: add --variant user")
    return out


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options, seed: int) -> list[Condition]:
    """One condition per exp × setting × variant × cot (greedy decoding uses no seed)."""
    p = prompts.prompts()
    variants = _variants(axes["variant"], options)
    short, long = options.max_new_tokens, options.max_new_tokens_cot
    out = []
    for exp in axes["exp"]:
        items = [it for it in dataset.items if it.tags["exp"] == exp]
        if not items:
            continue
        for setting in axes["setting"]:
            pool = {} if setting == "zero" else dataset.extras["pools"][exp][setting]
            for vname, instruction in variants.items():
                for cot in axes["cot"]:
                    on = cot == "on"
                    strategy = CxnliPrompt(instruction, p["example"], p["question_cot" if on else "question"], pool,
                                           by_schema=setting.endswith("cxnli"), cot=on,
                                           max_new_tokens=long if on else short)
                    name = f"exp{exp}/{setting}/{vname}" + ("/cot" if on else "")
                    out.append(Condition(name, {"exp": exp, "setting": setting, "variant": vname, "cot": cot},
                                         strategy, items))
    if not out:
        raise ConfigError(f"dataset {dataset.name!r} has no items for exp {', '.join(axes['exp'])}")
    return out


def _cli() -> Any:
    from lingdiag.suites.cxnli.cli import app

    return app


SUITE = register_suite(Suite(
    name="cxnli",
    description="CxNLI: constructional NLI, Exp 1 (entrenched) vs Exp 2 (syntactically identical)",
    axes=(
        Axis("exp", EXPS, EXPS, "1: CxNLI (§4), 2: CxNLI-Distinction (§5)"),
        Axis("setting", SETTINGS, SETTINGS, "in-context examples: none, or 1/3 premises from CxNLI or SNLI"),
        Axis("variant", VARIANTS, (DEFAULT_VARIANT,), "Appendix E prompts; 'user' = -o variants=FILE"),
        Axis("cot", ("off", "on"), ("off",), "chain-of-thought (Appendix F): reasoning, answer on the last line"),
    ),
    load=load,
    conditions=conditions,
    metrics=metrics.metrics,
    table=tables.table,
    options=Options,
    stat_tags=("exp", "construction", "schema", "kind"),
    cli=_cli,
))
