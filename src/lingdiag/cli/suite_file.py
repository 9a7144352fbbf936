"""``lingdiag suite check``: validate a suite file (``docs/suites.md``)."""

from __future__ import annotations

from pathlib import Path

import typer

from lingdiag.cli.app import app, out
from lingdiag.suitefile.check import check

suite_app = typer.Typer(no_args_is_help=True, help="Suite files: a diagnostic in one YAML file (docs/suites.md).")
app.add_typer(suite_app, name="suite")


@suite_app.command("check")
def check_cmd(
    path: Path = typer.Argument(..., help="The suite file (.yaml)."),
    dataset: str = typer.Option("builtin", help="The dataset to load: builtin (the file's items.data), a name "
                                "under items.datasets, or a path / hf: spec."),
) -> None:
    """Validate a suite file, load its data and render every prompt; errors are one line each."""
    report = check(path, dataset)
    s = report.suite
    out.print(f"ok: {path}: suite {s.name!r}, {report.n_items} items ({report.dataset}), "
              f"{len(report.conditions)} conditions ({', '.join(report.conditions)}), {report.requests} requests, "
              f"paired metrics: {', '.join(s.paired_metrics) or 'none'}",
              markup=False, highlight=False, soft_wrap=True)
