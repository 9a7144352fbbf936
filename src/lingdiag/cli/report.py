"""``lingdiag report``: tables (and an HTML page) recomputed from run directories, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app
from lingdiag.cli.options import RESULTS, Json
from lingdiag.io.terminal import plain_lines
from lingdiag.reading import load_runs
from lingdiag.records import dumps
from lingdiag.report.export import write_tables
from lingdiag.report.html import write_html
from lingdiag.report.scaling import parse_families
from lingdiag.report.tables import metrics_json, tables


@app.command(rich_help_panel=RESULTS)
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run directories to tabulate together.")],
    html: Annotated[Path | None, typer.Option(help="Also write an HTML report with figures here.")] = None,
    tables_dir: Annotated[Path | None, typer.Option("--tables", help="Also write each suite's tables as Markdown "
                                                    "and LaTeX (<suite>.md, <suite>.tex) into this directory.")] = None,
    family: Annotated[list[str] | None, typer.Option(help="MODEL=FAMILY: the model's line in the scaling figure "
                                                          "(default: the model_type of its config.json); "
                                                          "repeatable.")] = None,
    as_json: Json = False,
) -> None:
    """Recompute metrics from the records of one or more runs (offline) and print the tables."""
    loaded = load_runs(runs)
    text = tables(loaded)
    if html is not None:
        write_html(html, text, loaded, parse_families(family or []))
    if tables_dir is not None:
        write_tables(tables_dir, loaded)
    if as_json:
        print(dumps(metrics_json(loaded), indent=2, sort_keys=True))
    else:
        print(plain_lines(text))
