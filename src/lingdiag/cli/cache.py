"""``lingdiag cache stats|clear``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from lingdiag.cli.app import cache_app, out
from lingdiag.cli.options import Json
from lingdiag.io.paths import cache_dir
from lingdiag.io.terminal import markup_safe
from lingdiag.models.cache import ResponseCache
from lingdiag.records import dumps


@cache_app.command("stats")
def cache_stats(as_json: Json = False) -> None:
    """Entries per model and request kind."""
    stats = ResponseCache(cache_dir() / "responses.sqlite").stats()
    if as_json:
        print(dumps(stats, indent=2))
        return
    out.print(f"{markup_safe(stats['path'])}: {stats['bytes']:,} bytes", soft_wrap=True)
    if "disabled" in stats:
        out.print(f"cache disabled: {markup_safe(stats['disabled'])}")
    if not stats["entries"]:
        out.print("no cached responses")
        return
    table = Table("model", "kind", "entries")
    for e in stats["entries"]:
        table.add_row(markup_safe(e["model"]), markup_safe(e["kind"]), f"{e['count']:,}")
    out.print(table)


@cache_app.command("clear")
def cache_clear(model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Only this model's entries (its name as `cache stats` lists it).")] = None) -> None:
    """Delete cached responses."""
    n = ResponseCache(cache_dir() / "responses.sqlite").clear(model)
    out.print(f"deleted {n} cached responses")
