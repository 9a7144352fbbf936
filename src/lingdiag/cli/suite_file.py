"""``lingdiag suite check`` (validate a suite file, ``docs/suites.md``) and ``lingdiag suite score``
(outside answers → the file's metrics and table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app, out
from lingdiag.cli.options import DEFAULT_DATASET, SUITE_TOOLS, dataset_option, json_option, out_option
from lingdiag.cli.score import label_score_command
from lingdiag.errors import ConfigError
from lingdiag.suitefile import load_suite
from lingdiag.suitefile.check import check

suite_app = typer.Typer(no_args_is_help=True, help="Suite files: a diagnostic in one YAML file (docs/suites.md).")
app.add_typer(suite_app, name="suite", rich_help_panel=SUITE_TOOLS)


@suite_app.command("check")
def check_cmd(
    path: Annotated[Path, typer.Argument(help="The suite file (.yaml).")],
    dataset: Annotated[str | None, dataset_option(f"The dataset to load: builtin (the file's items.data), a name "
                                                  f"under items.datasets, or a path / hf: spec "
                                                  f"{DEFAULT_DATASET}.")] = None,
) -> None:
    """Validate a suite file, load its data and render every prompt; errors are one line each."""
    report = check(path, dataset)
    s = report.suite
    out.print(f"ok: {path}: suite {s.name!r}, {report.n_items} items ({report.dataset}), "
              f"{len(report.conditions)} conditions ({', '.join(report.conditions)}), {report.requests} requests, "
              f"paired metrics: {', '.join(s.paired_metrics) or 'none'}",
              markup=False, highlight=False, soft_wrap=True)


@suite_app.command("score")
def score_cmd(
    path: Annotated[Path, typer.Argument(help="The suite file (.yaml).")],
    scores: Annotated[Path, typer.Option("--scores", help="CSV/TSV/JSONL: an id column and an answer column.")],
    score_col: Annotated[str, typer.Option(help="Column holding the answer (raw text or a label).")] = "answer",
    id_col: Annotated[str, typer.Option(help="Column holding the dataset item id.")] = "id",
    dataset: Annotated[str | None, dataset_option(f"The dataset the answers refer to {DEFAULT_DATASET}.")] = None,
    out_dir: Annotated[Path | None, out_option("Also write a run directory (for report).")] = None,
    as_json: Annotated[bool, json_option("Print metrics and unmatched rows as JSON.")] = False,
) -> None:
    """Metrics of answers produced elsewhere, parsed as the file's conditions parse theirs."""
    suite = load_suite(path)
    if suite.parse_answer is None:
        raise ConfigError(f"{path}: its conditions read answers differently (or by log-likelihood); "
                          "lingdiag suite score needs one parser and label set")
    label_score_command(suite)(scores=scores, score_col=score_col, id_col=id_col, dataset=dataset, out=out_dir,
                               as_json=as_json)
