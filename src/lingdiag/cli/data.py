"""``lingdiag fetch`` and ``lingdiag data stats|build``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from lingdiag.cli.app import app, data_app, out
from lingdiag.errors import ConfigError
from lingdiag.fetch import fetch as do_fetch
from lingdiag.itemcounts import counts
from lingdiag.records import dumps
from lingdiag.registry import load_plugins
from lingdiag.suite import SUITES


@app.command()
def fetch(
    suite: str = typer.Argument(..., help="Suite whose official files to download."),
    mirror: str = typer.Option(None, "--from", help="A directory or base URL holding the files."),
    results: bool = typer.Option(False, "--results", help="The authors' published per-item outputs instead."),
) -> None:
    """Download a suite's official data files, verifying pinned SHA-256 checksums."""
    load_plugins()
    for path in do_fetch(f"{suite}-results" if results else suite, mirror):
        out.print(f"verified {path}")


@data_app.command("stats")
def data_stats(
    suite: str = typer.Argument(...),
    dataset: str = typer.Option(None, help="builtin, official, or a path."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Item counts per tag (group, class, construction, ...) and gold label."""
    s = SUITES.get(suite)
    ds = s.load(dataset or s.default_dataset)
    result = counts(ds.items, s.stat_tags)
    if as_json:
        print(dumps(result, indent=2, sort_keys=True))
        return
    out.print(f"{suite} / {ds.name}: {result['n']} items")
    for tag, table in result["by"].items():
        t = Table(tag, "n", *result["labels"])
        for value, row in table.items():
            t.add_row(value, str(row["n"]), *(str(row["gold"].get(lab, 0)) for lab in result["labels"]))
        out.print(t)


@data_app.command("build")
def data_build(
    suite: str = typer.Argument(...),
    out_file: Path = typer.Option(..., "--out", help="JSON file to write (the official format)."),
    lexicon: Path = typer.Option(None, help="Lexicon (CSV or YAML); default: the built-in one."),
    templates: Path = typer.Option(None, help="Sentence templates (YAML); default: the built-in ones."),
    seed: int = typer.Option(0, help="Chooses among `a|b` alternatives in the lexicon."),
) -> None:
    """Generate a dataset from a lexicon and templates; run it with --dataset FILE."""
    s = SUITES.get(suite)
    if s.build is None:
        raise ConfigError(f"suite {suite!r} has no dataset generator")
    rows = s.build(lexicon, templates, seed)
    out_file.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    out.print(f"wrote {len(rows)} items to {out_file}")


