"""``lingdiag explica select-prompt|write-builtin`` and ``lingdiag score explica``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.flags import Dtype, ModelOption, model_options
from lingdiag.io.fetch import fetch
from lingdiag.io.markdown import markdown_table
from lingdiag.io.paths import sha256_file
from lingdiag.metrics.core import summary
from lingdiag.models.base import Backend, dispatch
from lingdiag.models.cache import cached
from lingdiag.models.door import check_model, load_model
from lingdiag.records import (
    Item,
    LogLikelihood,
    LoglikelihoodRequest,
    ResultRow,
    dumps,
)
from lingdiag.rundir import write_imported
from lingdiag.suite import spread
from lingdiag.suites.explica import SUITE, data
from lingdiag.suites.explica.files import load
from lingdiag.suites.explica.importing import ImportResult, ScoreColumns, Task, import_scores
from lingdiag.suites.explica.metrics import metrics
from lingdiag.suites.explica.options import Options
from lingdiag.suites.explica.prompts import PROMPT_TASKS, load_prompts
from lingdiag.suites.explica.reproduce import compare, markdown, score_all
from lingdiag.suites.explica.reproduce import summary as summary_line
from lingdiag.suites.explica.rules import MissingRatings, RatingRule, Ties
from lingdiag.suites.explica.tables import table
from lingdiag.suites.explica.tasks import perplexity, strategy

# -- command line -----------------------------------------------------------------------------

app = typer.Typer(no_args_is_help=True, help="ExpliCa tools: prompt selection, built-in data.")
_APPLIES: dict[str, tuple[Task, ...]] = {
    "--connective-col": ("rating", "perplexity"), "--choices-col": ("mc",),
    "--lower-is-better/--higher-is-better": ("perplexity",), "--ties": ("rating",), "--missing-ratings": ("rating",)}
"""The options of ``score explica`` that only some tasks read; given with another task they are refused."""


def score(
    scores: Annotated[Path, typer.Option("--scores", help="CSV/TSV: Sentence_A, Sentence_B, the task's columns.")],
    task: Annotated[Task, typer.Option(help="rating or perplexity (a row per pair and connective), cloze or mc "
                                            "(the first row of each pair counts).")] = "rating",
    score_col: Annotated[str, typer.Option(help="Rating (number or answer text), perplexity, cloze answer or "
                                                "MC letter.")] = "score",
    connective_col: Annotated[str | None, typer.Option(help="Rating / perplexity: the row's connective "
                                                            "[default: connective].")] = None,
    choices_col: Annotated[str | None, typer.Option(help="MC: letter → connective dict "
                                                         "[default: answers_dict].")] = None,
    lower_is_better: Annotated[bool | None, typer.Option("--lower-is-better/--higher-is-better",
                                                         help="Perplexity task: lowest wins (log-probs: higher) "
                                                              "[default: lower].")] = None,
    ties: Annotated[Ties | None, typer.Option(help="Rating ties (rules.py) [default: alphabetical].")] = None,
    missing_ratings: Annotated[MissingRatings | None, typer.Option(help="Unreadable ratings (-1) "
                                                                        "[default: keep].")] = None,
    dataset: Annotated[str | None, typer.Option(help="builtin, official, or a path in the official layout "
                                                     "(default: the suite's default dataset, builtin).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Also write a run directory (for report).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics and unmatched rows as JSON.")] = False,
) -> None:
    """Metrics of answers or scores computed elsewhere, exactly as a run computes them."""
    given = {"--connective-col": connective_col, "--choices-col": choices_col,
             "--lower-is-better/--higher-is-better": lower_is_better, "--ties": ties,
             "--missing-ratings": missing_ratings}
    for option, value in given.items():
        if value is not None and task not in _APPLIES[option]:
            raise ConfigError(f"{option} does not apply to --task {task} (only to --task "
                              f"{' or '.join(_APPLIES[option])})")
    dataset = dataset or SUITE.default_dataset
    items = load(dataset).items
    defaults = ScoreColumns(task, score_col)
    cols = ScoreColumns(task, score_col, connective_col or defaults.connective_col, choices_col or defaults.choices_col,
                        defaults.lower_is_better if lower_is_better is None else lower_is_better,
                        RatingRule(ties or defaults.rule.ties, missing_ratings or defaults.rule.missing))
    result = import_scores(scores, items, cols)
    if not result.records:
        raise DatasetError(f"no row matched an item of dataset {dataset!r} ({len(result.unmatched)} unmatched rows, "
                           f"{len(result.incomplete)} incomplete items); nothing to score", path=scores)
    m = {**metrics(result.records), **summary(result.records)} if result.records else {}
    if out is not None and result.records:
        write_imported(out, suite="explica", model=scores.stem, dataset=dataset, records=result.records,
                       provenance={"file": str(scores), "sha256": sha256_file(scores), **asdict(cols),
                                   "rules": cols.rule.describe()})
    if as_json:
        print(dumps({"metrics": m, "matched_items": len(result.records), "unmatched": result.unmatched,
                          "incomplete": result.incomplete, "repeated_rows": result.repeated,
                          "rules": cols.rule.describe()}, indent=2, sort_keys=True, default=str))
        return
    if result.records:
        print(table([ResultRow(scores.name, task, dict(result.records[0].axes), m)]))
    print(f"matched items: {len(result.records)} of {len(items)}; rating rules: {cols.rule.describe()}",
          file=sys.stderr)
    _left_out(result)


def _left_out(result: ImportResult) -> None:
    """On stderr: the items left out for a missing connective and the rows that matched no item."""
    if result.incomplete:
        print(f"left out, missing some connective: {len(result.incomplete)} items "
              f"({', '.join(result.incomplete[:10])}{' ...' if len(result.incomplete) > 10 else ''})", file=sys.stderr)
    if result.unmatched:
        print(f"unmatched rows: {len(result.unmatched)}", file=sys.stderr)
    for u in result.unmatched[:20]:
        print(f"  row {u['row']}: {u['reason']}: {u['Sentence_A']!r} / {u['Sentence_B']!r}", file=sys.stderr)
    if len(result.unmatched) > 20:
        print(f"  ... and {len(result.unmatched) - 20} more unmatched rows (see --json)", file=sys.stderr)


def reproduce(
    source: Annotated[Path | None, typer.Option("--from", help="A directory in the layout of the published "
                                                               "results (default: fetch them, pinned).")] = None,
    dataset: Annotated[str, typer.Option(help="The ExpliCa data the published outputs refer to: official, or a "
                                              "path in its layout (always the official pairs, not the suite's "
                                              "default).")] = "official",
    frequencies: Annotated[Path | None, typer.Option(help="The frequency bins of Tables 10-11 (explica_freq_4800.tsv "
                                                          "layout), for a --dataset path; official has them.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Every cell as JSON.")] = False,
) -> None:
    """Re-score the authors' published outputs: Tables 6, 7, 8, 10, 11, 13 and 14, ours beside theirs."""
    if source is None:
        source = fetch("explica-results")[0].parents[2]
    elif not source.is_dir():
        raise ConfigError(f"--from {source}: not a directory")
    items = load(dataset).items
    if frequencies is not None:
        binned = data.with_frequency_bins(items, frequencies)
        # An item the file has no row for comes back as it was (the same object).
        if all(b is it for b, it in zip(binned, items, strict=True)):
            raise DatasetError("no row names a pair of the dataset (Sentence_A, Sentence_B): the bins of "
                               "other data?", path=frequencies)
        items = binned
    cells = compare(score_all(source, items))
    if not cells:
        raise ConfigError(f"--from {source}: no published result files found (expected acceptability/, cloze/, "
                          "mc/, perplexity/)")
    if as_json:
        print(dumps({"cells": [{**asdict(c), "equal": c.equal, "computable": c.computable} for c in cells],
                     "summary": summary_line(cells)}, indent=2))
        return
    print(markdown(cells))
    print(summary_line(cells))


def prompt_perplexities(backend: Backend, items: Sequence[Item], tasks: Sequence[str],
                        prompts_file: str | None = None) -> dict[str, dict[str, float]]:
    """Mean perplexity of each task's zero-shot prompt variants over ``items`` (Appendix E).

    Args:
        backend: A backend with log-likelihoods.
        items: Items whose sentences fill the prompts.
        tasks: Prompting tasks to rank.
        prompts_file: Optional user prompt file (``-o prompts=FILE``).

    Returns:
        ``{task: {variant: mean per-token perplexity of the filled prompt text}}``.
    """
    out: dict[str, dict[str, float]] = {}
    for task in tasks:
        _, variants = load_prompts(prompts_file)[task]
        out[task] = {}
        for name in variants:
            strat = strategy(task, 0, "greedy",
                             Options.model_validate({"prompts": prompts_file, f"prompt_{task}": name, "format": "raw"}))
            texts = []
            for k, it in enumerate(items):
                reqs = strat.render(it)
                # Rating has one prompt per connective: rotate through them over the items.
                texts.append(reqs[k % len(reqs)].prompt)
            lls = dispatch(backend, [LoglikelihoodRequest(context="", continuation=t) for t in texts])
            out[task][name] = sum(perplexity(r) for r in lls if isinstance(r, LogLikelihood)) / len(lls)
    return out


@app.command("select-prompt")
def select_prompt_cmd(
    model: Annotated[list[str], typer.Option("--model", "-m", help="Model specs, comma-separated (or repeated), "
                                             "averaged over.")],
    limit: Annotated[int, typer.Option(help="Items whose sentences fill the prompts.")] = 20,
    task: Annotated[str, typer.Option(help="Tasks to rank (comma-separated).")] = ",".join(PROMPT_TASKS),
    prompts: Annotated[str | None, typer.Option(help="A YAML file with more variants (as -o prompts=FILE).")] = None,
    dataset: Annotated[str | None, typer.Option(help="builtin, official, or a path (default: the suite's "
                                                     "default dataset, builtin).")] = None,
    model_option: ModelOption = None,
    dtype: Dtype = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Rank prompt variants by mean perplexity over models (the paper's selection, §4).

    Each model loads through the one model door (``models.door``) with ``--model-option`` and ``--dtype``,
    as a run of the suite would; every model is checked before the first loads.
    """
    tasks = [t for t in task.split(",") if t]
    model = [m for value in model for m in value.split(",") if m]  # the CLI's lists: comma-separated
    bad = [t for t in tasks if t not in PROMPT_TASKS]
    if bad:
        raise ConfigError(f"unknown task(s) {', '.join(bad)}; valid: {', '.join(PROMPT_TASKS)}")
    options = model_options(model_option, dtype)
    configs = {spec: RunConfig(suite=SUITE.name, model=spec, model_options=options) for spec in model}
    for config in configs.values():  # every model checked before the first loads, as a run's or a study's
        check_model(config)
    items = spread(load(dataset or SUITE.default_dataset).items, limit)
    per_model = {}
    for spec, config in configs.items():
        per_model[spec] = prompt_perplexities(cached(load_model(config)), items, tasks, prompts)
    ranking = {t: sorted(((name, sum(per_model[m][t][name] for m in model) / len(model))
                          for name in per_model[model[0]][t]), key=lambda x: x[1]) for t in tasks}
    if as_json:
        print(dumps({"per_model": per_model, "ranking": ranking}, indent=2, sort_keys=True))
        return
    print(markdown_table(["Task", "Variant", *model, "Avg", "Selected"],
                         [[t, name, *[per_model[m][t][name] for m in model], avg, "✓" if k == 0 else ""]
                          for t in tasks for k, (name, avg) in enumerate(ranking[t])]))


@app.command("write-builtin")
def write_builtin_cmd(out: Annotated[Path, typer.Argument(help="Where to write the CSV.")]) -> None:
    """Write the built-in pairs (illustrative ratings) in the official CSV layout."""
    n = data.write_builtin(out)
    print(f"wrote {n} rows to {out} (ratings are illustrative, not human judgements)", file=sys.stderr)
