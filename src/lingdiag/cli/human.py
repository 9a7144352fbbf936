"""``lingdiag human export|import``: rating studies out to raters and their answers back."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from lingdiag.cli.app import human_app, out
from lingdiag.cli.options import Dataset, Json, Limit, out_option, seed_option
from lingdiag.errors import ConfigError
from lingdiag.human import STUDIES, Study, build_study, compare, export, gold_rule, import_study, read_responses
from lingdiag.io.terminal import markup_safe
from lingdiag.reading import records_of
from lingdiag.records import dumps
from lingdiag.registry import load_plugins
from lingdiag.suite import SUITES, ItemView, Suite, spread


def _view(s: Suite) -> ItemView:
    if s.view is None:
        raise ConfigError(f"suite {s.name!r} does not say which fields raters should see (Suite.view)")
    return s.view


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


@human_app.command("export")
def human_export(
    suite: Annotated[str, typer.Argument(help="Suite whose dataset to rate.")],
    out_dir: Annotated[Path, out_option("Directory for study.json, platform.csv and form.html.")],
    study: Annotated[str, typer.Option(help=f"Study type: {', '.join(sorted(STUDIES.names()))}.")] = "acceptability",
    dataset: Dataset = None,
    limit: Limit = None,
    per_list: Annotated[int, typer.Option("--per-list", help="Stimuli per rater list.")] = 40,
    attention: Annotated[int, typer.Option(help="Attention checks added to each list.")] = 2,
    seed: Annotated[int, seed_option("Shuffles stimuli into lists (and, in the form, each rater's order).")] = 0,
) -> None:
    """Write a rating study: a manifest, a CSV for survey platforms and an offline HTML form."""
    load_plugins()
    s = SUITES.get(suite)
    spec = dataset or s.default_dataset
    items = spread(s.load(spec).items, limit)  # the same items as `lingdiag run --limit`
    st = build_study(STUDIES.get(study), suite, spec, items, _view(s), per_list=per_list, attention=attention,
                     seed=seed)
    done = export(st, out_dir)
    out.print(f"{done.n_stimuli} stimuli from {len(items)} items in {done.n_lists} lists "
              f"(+{attention} attention checks each): "
              + ", ".join(markup_safe(p) for p in (done.manifest, done.platform_csv, done.form)))


@human_app.command("import")
def human_import(
    manifest: Annotated[Path, typer.Argument(help="The study.json written by `lingdiag human export`.")],
    responses: Annotated[list[Path], typer.Argument(help="Response files (form downloads or a platform export).")],
    gold: Annotated[str, typer.Option(help="Gold rule: explica, argmax, or threshold (with the options "
                                           "below).")] = "explica",
    max_below: Annotated[float | None, typer.Option("--max-below", help="threshold: best mean below "
                                                    "this ...")] = None,
    mean_below: Annotated[float | None, typer.Option("--mean-below", help="... and mean of means below "
                                                     "this ...")] = None,
    label: Annotated[str, typer.Option(help="... give this label.")] = "unrelated",
    out_file: Annotated[Path | None, out_option("Dataset file to write (review table for quality studies).")] = None,
    as_json: Json = False,
) -> None:
    """Read responses back: agreement, exclusions, and gold labels written as a dataset file."""
    load_plugins()
    st = Study.read(manifest)
    s = SUITES.get(st.suite)
    ids = {x.item_id for x in st.stimuli}
    items = [it for it in s.load(st.dataset).items if it.id in ids]
    rule = gold_rule(gold, max_below, mean_below, label)
    report = import_study(st, responses, items, _view(s), rule, out_file)
    if as_json:
        print(dumps(report.to_dict(), indent=2, sort_keys=True))
        return
    out.print(f"{report.n_rows} rows, {report.duplicates} replaced by a later submission; "
              f"{len(report.raters)} raters kept, {len(report.excluded_raters)} excluded for a missed attention "
              f"check ({', '.join(map(markup_safe, report.excluded_raters)) or 'none'})")
    t = Table("question", "raters", "stimuli", "mean", "sd", "α", "ICC(2,1)", "ICC(2,k)", "split-half", "adjacent")
    for a in report.agreement:
        t.add_row(markup_safe(a.question), str(a.n_raters), str(a.n_stimuli), _f(a.mean), _f(a.sd), _f(a.alpha),
                  _f(a.icc_single), _f(a.icc_average), _f(a.split_half), _f(a.adjacent))
    out.print(t)
    if report.gold_rule:
        counts: dict[str, int] = {}
        for g in report.golds:
            counts[g.label] = counts.get(g.label, 0) + 1
        out.print(f"gold ({markup_safe(report.gold_rule)}): "
                  + ", ".join(f"{markup_safe(k)} {v}" for k, v in sorted(counts.items()))
                  + (f"; {len(report.unrated_items)} items unrated" if report.unrated_items else ""))
    if report.written:
        out.print(f"wrote {markup_safe(report.written)}")


@human_app.command("compare")
def human_compare(
    run_dir: Annotated[Path, typer.Argument(help="A run directory of the study's suite and dataset.")],
    manifest: Annotated[Path, typer.Argument(help="The study.json of the ratings.")],
    responses: Annotated[list[Path], typer.Argument(help="The response files.")],
    gold: Annotated[str, typer.Option(help="Gold rule, applied to the mean and to each rater's own "
                                           "ratings.")] = "explica",
    max_below: Annotated[float | None, typer.Option("--max-below")] = None,
    mean_below: Annotated[float | None, typer.Option("--mean-below")] = None,
    label: Annotated[str, typer.Option()] = "unrelated",
    score_key: Annotated[str | None, typer.Option("--score-key", help="Prediction detail holding variant → model "
                                                  "score (explica: ratings, perplexity) to correlate with the "
                                                  "human means.")] = None,
    lower_is_better: Annotated[bool, typer.Option("--lower-is-better", help="The score is better when "
                                                  "lower.")] = False,
    as_json: Json = False,
) -> None:
    """A run's answers against the raters: agreement with the gold, raters disagreeing, Spearman ρ."""
    load_plugins()
    st = Study.read(manifest)
    if len(st.kind.scales) != 1:
        raise ConfigError(f"compare needs a one-scale study; {st.study!r} has {len(st.kind.scales)}")
    records = records_of(run_dir)
    found = compare(records, st, read_responses(responses, st), gold_rule(gold, max_below, mean_below, label),
                    score_key, lower_is_better)
    if as_json:
        print(dumps([asdict(c) for c in found], indent=2, sort_keys=True))
        return
    t = Table("condition", "items", "= human gold", "raters disagreeing (mean share)", "items most raters disagree",
              "Spearman ρ (p, n)")
    for c in found:
        rho = "-" if c.spearman is None else f"{c.spearman:.3f} ({c.spearman_p:.3g}, {c.n_scored})"
        t.add_row(markup_safe(c.condition), str(c.n_items), f"{c.agreement_with_gold:.3f}",
                  f"{c.mean_share_disagreeing:.3f}", str(c.items_most_raters_disagree), rho)
    out.print(t)
