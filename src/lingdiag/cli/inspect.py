"""``lingdiag inspect RUN``: which parse rule took how many answers, per condition."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app
from lingdiag.cli.options import RESULTS, Json
from lingdiag.errors import RunError
from lingdiag.io.terminal import plain_lines
from lingdiag.records import dumps
from lingdiag.report.rules import parse_rules, rules_markdown


@app.command(rich_help_panel=RESULTS)
def inspect(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    examples: Annotated[int, typer.Option(min=0, help="Example answers shown per rule.")] = 3,
    as_json: Json = False,
) -> None:
    """Per condition, how many answers each parse rule took, with examples (to audit a parser)."""
    if not (run_dir / "items.jsonl").is_file():
        raise RunError(f"{run_dir}: no items.jsonl; is it a lingdiag run directory?")
    rules = parse_rules(run_dir, examples)
    print(dumps(rules, indent=2, sort_keys=True, ensure_ascii=False) if as_json else plain_lines(rules_markdown(rules)))
