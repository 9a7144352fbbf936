"""The typer application and its command groups; commands live in the sibling modules."""

from __future__ import annotations

import typer
from rich.console import Console

from lingdiag.cli.options import DATA, RESULTS, SETUP

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Linguistic diagnostics for language models.")
data_app = typer.Typer(no_args_is_help=True, help="Datasets: fetch, stats, build, audit.")
cache_app = typer.Typer(no_args_is_help=True, help="The response cache.")
score_app = typer.Typer(no_args_is_help=True, help="Score answers computed elsewhere (outside files → metrics).")
human_app = typer.Typer(no_args_is_help=True, help="Human rating studies: export, import, agreement, gold.")
app.add_typer(data_app, name="data", rich_help_panel=DATA)
app.add_typer(human_app, name="human", rich_help_panel=DATA)
app.add_typer(cache_app, name="cache", rich_help_panel=SETUP)
reproduce_app = typer.Typer(no_args_is_help=True, help="Re-score a paper's published outputs beside its tables.")
app.add_typer(score_app, name="score", rich_help_panel=RESULTS)
app.add_typer(reproduce_app, name="reproduce", rich_help_panel=RESULTS)
import_app = typer.Typer(no_args_is_help=True, help="Other harnesses' logs (lm-eval, inspect) → run directories.")
app.add_typer(import_app, name="import", rich_help_panel=DATA)
err = Console(stderr=True)
out = Console()
