"""``lingdiag data fetch|stats|build|audit`` (and ``lingdiag fetch``, a hidden alias of ``data fetch``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from lingdiag.audit import AuditSources, audit
from lingdiag.audit.frequency import balance_figure
from lingdiag.cli.app import app, data_app, out
from lingdiag.cli.audit_view import print_audit, write_item_scores
from lingdiag.cli.options import DEFAULT_DATASET, Dataset, Json, dataset_option, out_option, seed_option
from lingdiag.errors import ConfigError
from lingdiag.io.atomic import write_atomic
from lingdiag.io.fetch import fetch as do_fetch
from lingdiag.io.itemcounts import counts
from lingdiag.io.tabular import read_table
from lingdiag.io.terminal import plain
from lingdiag.records import Item, dumps
from lingdiag.registry import load_plugins
from lingdiag.suite import SUITES


@data_app.command("fetch")
def fetch(
    suite: Annotated[str, typer.Argument(help="Suite whose official files to download.")],
    mirror: Annotated[str | None, typer.Option("--from", help="A directory or base URL holding the files.")] = None,
    results: Annotated[bool, typer.Option("--results", help="The authors' published per-item outputs "
                                                            "instead.")] = False,
    only: Annotated[str, typer.Option("--only", help="Comma-separated file names without extension to fetch "
                                      "instead of all (e.g. wh_island,human_validation_summary for blimp).")] = "",
) -> None:
    """Download a suite's official data files (or blimp's, syntaxgym's), verifying pinned SHA-256 checksums."""
    load_plugins()
    names = [n for n in only.split(",") if n]
    for path in do_fetch(f"{suite}-results" if results else suite, mirror, names):
        out.print(f"verified {path}")


app.command("fetch", hidden=True, help="Alias of `lingdiag data fetch`.")(fetch)


@data_app.command("stats")
def data_stats(
    suite: Annotated[str, typer.Argument()],
    dataset: Dataset = None,
    as_json: Json = False,
) -> None:
    """Item counts per tag (group, class, construction, ...) and gold label."""
    s = SUITES.get(suite)
    ds = s.load(dataset or s.default_dataset)
    result = counts(ds.items, s.stat_tags)
    excluded = [{"item_id": e.item_id, "reason": e.reason} for e in ds.excluded]
    if as_json:
        print(dumps({**result.to_json(), **({"excluded": excluded} if excluded else {})}, indent=2, sort_keys=True))
        return
    out.print(f"{suite} / {ds.name}: {result.n} items")
    if excluded:  # as a run's table.md names them: never scored, so never silently missing from the count
        listed = ", ".join(f"{e['item_id']} ({e['reason']})" for e in excluded[:10])
        more = f", and {len(excluded) - 10} more" if len(excluded) > 10 else ""
        out.print(plain(f"{len(excluded)} excluded (not interpretable, never scored): {listed}{more}"), markup=False,
                  highlight=False, soft_wrap=True)
    for tag, table in result.by.items():
        t = Table(tag, "n", *result.labels)
        for value, row in table.items():
            t.add_row(value, str(row.n), *(str(row.gold.get(lab, 0)) for lab in result.labels))
        out.print(t)


@data_app.command("build")
def data_build(
    suite: Annotated[str, typer.Argument()],
    out_file: Annotated[Path, out_option("JSON file to write (the official format).")],
    lexicon: Annotated[Path | None, typer.Option(help="Lexicon (CSV or YAML); default: the built-in one.")] = None,
    templates: Annotated[Path | None, typer.Option(help="Sentence templates (YAML); default: the built-in "
                                                        "ones.")] = None,
    seed: Annotated[int, seed_option("Chooses among `a|b` alternatives in the lexicon.")] = 0,
) -> None:
    """Generate a dataset from a lexicon and templates; run it with --dataset FILE."""
    s = SUITES.get(suite)
    if s.build is None:
        raise ConfigError(f"suite {suite!r} has no dataset generator")
    rows = s.build(lexicon, templates, seed)
    write_atomic(out_file, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    out.print(f"wrote {len(rows)} items to {out_file}")




def _halves(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"--halves takes two field names, A,B; got {text!r}")
    return parts[0], parts[1]


def _audit_items(target: str, dataset: str | None, halves: str | None, by: str | None
                 ) -> tuple[str, list[Item], tuple[str, str], str]:
    """A suite's dataset (with its item view) or a CSV/TSV file whose columns are the fields."""
    load_plugins()
    if target in SUITES.names():
        s = SUITES.get(target)
        ds = s.load(dataset or s.default_dataset)
        if halves:
            default_class = s.view.class_tag if s.view else "gold"
            return f"{target}/{ds.name}", list(ds.items), _halves(halves), by or default_class
        if s.view is None:
            raise ConfigError(f"suite {target!r} does not say which fields are an item's halves; give --halves A,B")
        return f"{target}/{ds.name}", list(ds.items), s.view.halves, by or s.view.class_tag
    path = Path(target)
    if not path.is_file():
        raise ConfigError(f"{target!r} is neither a suite ({', '.join(SUITES.names())}) nor a file")
    _, rows = read_table(path)
    items = [Item(id=row.get("id") or str(n), fields=row, gold=row.get("label") or None, tags=row)
             for n, row in enumerate(rows, 2)]
    return str(path), items, _halves(halves or "first,second"), by or "gold"


@data_app.command("audit")
def data_audit(
    target: Annotated[str, typer.Argument(help="A suite name, or a CSV/TSV file (one item per row).")],
    dataset: Annotated[str | None, dataset_option(f"With a suite: builtin, official, a path, or a name the suite "
                                                  f"knows {DEFAULT_DATASET}.")] = None,
    corpus: Annotated[Path | None, typer.Option(help="Plain-text corpus, one unit per line, for PMI/LMI.")] = None,
    counts: Annotated[Path | None, typer.Option(help="A counts file (lemma1, lemma2, count) instead of "
                                                     "--corpus.")] = None,
    frequencies: Annotated[Path | None, typer.Option(help="Per-row frequency file (ExpliCa's "
                                                          "explica_freq_4800.tsv layout).")] = None,
    lemmatizer: Annotated[str, typer.Option(help="builtin, or spacy:<pipeline> where one is installed.")] = "builtin",
    lexical_frequency: Annotated[str | None, typer.Option(
        "--lexical-frequency", help="Bin items by their words' frequency: wordfreq, or corpus.")] = None,
    by: Annotated[str | None, typer.Option(help="Item tag to compare classes by (default: the suite's; gold = "
                                                "gold label).")] = None,
    halves: Annotated[str | None, typer.Option(help="The two item fields to associate, A,B (default: the "
                                                    "suite's).")] = None,
    items_out: Annotated[Path | None, typer.Option("--items-out", help="Write per-item scores to this CSV.")] = None,
    figure: Annotated[Path | None, typer.Option(help="Write the class-per-bin bar chart (ExpliCa Fig. 2) to this "
                                                     "PNG.")] = None,
    as_json: Json = False,
) -> None:
    """Audit a dataset: lexical association between item halves, frequency bins, class balance."""
    name, items, pair, class_by = _audit_items(target, dataset, halves, by)
    sources = AuditSources(corpus, counts, frequencies, lemmatizer, lexical_frequency)
    report = audit(name, items, pair, class_by, sources)
    if items_out:
        write_item_scores(report, items_out)
    if figure:
        if report.frequency is None:
            raise ConfigError("--figure draws the frequency bins: give --frequencies too")
        write_atomic(figure, balance_figure(report.frequency).png)
    if as_json:
        print(dumps(report.to_dict(), indent=2, sort_keys=True))
        return
    print_audit(report)
