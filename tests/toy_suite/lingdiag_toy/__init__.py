"""A toy suite, added to lingdiag exactly as a user adds one: one package plus one registration.

Is a word a noun or a verb? The prompt is the shared chat formulation with its label
parser; the suite brings its data, options, metrics, table, a figure and a command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lingdiag import Axis, Condition, Dataset, Item, ItemRecord, ResultRow, Suite, register_suite
from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import accuracy
from lingdiag.prompts.chat import ChatPrompt

WORDS = {"dog": "noun", "run": "verb", "table": "noun", "eat": "verb", "idea": "noun", "sing": "verb"}
LABELS = ("noun", "verb")


class Options(BaseModel):
    """``-o max_new_tokens=N``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_new_tokens: int = Field(default=4, ge=1)


def load(spec: str) -> Dataset:
    """The built-in words (the only dataset)."""
    return Dataset(spec, [Item(w, {"word": w}, gold, {"pos": gold}) for w, gold in WORDS.items()])


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options, seed: int) -> list[Condition]:
    """One condition per style."""
    systems = {"plain": "Answer noun or verb.", "strict": "Answer with exactly one word: noun or verb."}
    return [Condition(style, {"style": style},
                      ChatPrompt(systems[style], "Word: {word}", LABELS, max_new_tokens=options.max_new_tokens),
                      dataset.items) for style in axes["style"]]


def metrics(records: Sequence[ItemRecord]) -> dict[str, Any]:
    """Accuracy."""
    return {"accuracy": accuracy(records)}


def table(rows: Sequence[ResultRow]) -> str:
    """Accuracy per model and style."""
    return "## Toy\n\n" + markdown_table(["Style", "Model", "Acc"],
                                         [[r.axes["style"], r.model, r.metrics["accuracy"]] for r in rows])


def figures(rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
    """One bar per row, in its model's colour."""
    fig, ax = pyplot().subplots(figsize=(3, 2))
    ax.bar([f"{r.model}/{r.condition}" for r in rows], [r.metrics["accuracy"] for r in rows],
           color=[colours[r.model] for r in rows])
    return [Figure("Toy accuracy", to_png(fig), "One bar per model and style.", colours.legend(r.model for r in rows))]


def cli() -> Any:
    """``lingdiag toy words``."""
    import typer

    app = typer.Typer(no_args_is_help=True, help="Toy tools.")

    @app.command()
    def words() -> None:
        """List the words."""
        print(" ".join(WORDS))

    return app


SUITE = register_suite(Suite(
    name="toy", description="Noun or verb (a test suite)",
    axes=(Axis("style", ("plain", "strict"), ("plain",), "system prompt"),),
    load=load, conditions=conditions, metrics=metrics, table=table, options=Options,
    figures=figures, cli=cli,
))
