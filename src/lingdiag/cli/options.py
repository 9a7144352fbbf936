"""The options every command shares, declared once so that each means the same everywhere.

``-m/--model`` takes a model spec wherever a model is taken; ``--dataset`` defaults to the
suite's own default dataset; ``--limit N`` spreads N items evenly over the data (as
``lingdiag run`` picks them); ``--json`` prints JSON instead of tables; ``--seed`` seeds
whatever the command draws; a list is comma-separated (``--layers 10,20``; a repeated option
still adds to it). Only ``-o key=value`` options repeat by design.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer

# Brackets escaped: the help is rich markup, which would swallow ``[@URL]`` as a tag.
MODEL_HELP = r"Model spec: an embedded name (smollm2-135m), hf:DIR|ID\[@REVISION], gguf:FILE or openai:NAME\[@URL]."

Model = Annotated[str, typer.Option("--model", "-m", help=MODEL_HELP)]
"""A required model."""
OptionalModel = Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)]
Models = Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP + " Comma-separated for several.")]
DEFAULT_DATASET = "(default: the suite's default dataset)"
"""What an omitted ``--dataset`` means on every command: ``Suite.default_dataset``."""
Dataset = Annotated[str | None, typer.Option(
    help=f"builtin, official, a path, or a name the suite knows {DEFAULT_DATASET}.")]
# No ``min=``: click would print its own boxed usage error; a limit under 1 is lingdiag's one-line error.
Limit = Annotated[int | None, typer.Option(
    help="Only N items, spread evenly over the data (every group of an ordered file is hit).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
Seed = Annotated[int, typer.Option(help="Seeds whatever the command draws (resamples, permutations, shuffles).")]
Partial = Annotated[bool, typer.Option("--partial", help="Also read runs whose numbers are not final (stopped, "
                                       "running, stale, with failed items); each is marked in every table. "
                                       "Without it such a run is refused, naming its state.")]


# Which data, what ``--out`` writes, what ``--json`` prints and what ``--seed`` draws differ per
# command: the option (its name and kind) is declared here, its help by the command.
def dataset_option(help: str) -> Any:
    """``--dataset`` with this command's help, which ends with ``DEFAULT_DATASET``."""
    return typer.Option("--dataset", help=help)


def out_option(help: str) -> Any:
    """``--out`` (a path), with what this command writes there."""
    return typer.Option("--out", help=help)


def json_option(help: str) -> Any:
    """``--json`` (a flag), with what this command prints as JSON."""
    return typer.Option("--json", help=help)


def seed_option(help: str) -> Any:
    """``--seed``, with what it seeds in this command."""
    return typer.Option("--seed", help=help)

# Help panels of `lingdiag --help`, in the order a study goes.
RUN, RESULTS, DATA, TREAT, SUITE_TOOLS, SETUP = ("Run models", "Read results", "Data and people",
                                            "Treat a model", "Suite tools", "Setup")


def comma_list(values: Sequence[str] | None) -> list[str]:
    """``["a,b", "c"]`` → ``["a", "b", "c"]``: a list option given comma-separated, repeated, or both."""
    return [v.strip() for value in values or () for v in value.split(",") if v.strip()]
