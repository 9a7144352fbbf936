"""``lingdiag cache stats|clear``."""

from __future__ import annotations

from typing import Annotated

import typer

from lingdiag.cli.app import cache_app, out
from lingdiag.io.paths import cache_dir
from lingdiag.models.cache import ResponseCache
from lingdiag.records import dumps


@cache_app.command("stats")
def cache_stats() -> None:
    """Entries per model and request kind."""
    print(dumps(ResponseCache(cache_dir() / "responses.sqlite").stats(), indent=2))


@cache_app.command("clear")
def cache_clear(model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Only this model's entries (its name as `cache stats` lists it).")] = None) -> None:
    """Delete cached responses."""
    n = ResponseCache(cache_dir() / "responses.sqlite").clear(model)
    out.print(f"deleted {n} cached responses")


