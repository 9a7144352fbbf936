"""``lingdiag cxnli generate``: templatic hypotheses from annotated premises."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.suites.cxnli import data, templates

app = typer.Typer(no_args_is_help=True)


@app.callback()
def cxnli_tools() -> None:
    """CxNLI tools: templatic hypotheses from annotated premises."""


@app.command()
def generate(
    slots: Annotated[Path, typer.Option("--slots", help="CSV/TSV or JSON: construction, premise, slot columns, "
                                                        "optional neutral.")],
    out: Annotated[Path, typer.Option("--out", help="Output .tsv/.csv (official three-row layout) or .json.")],
    template_file: Annotated[Path | None, typer.Option("--templates",
                                                       help="Templates YAML (default: the packaged one).")] = None,
) -> None:
    """Generate entailment/contradiction hypotheses from construction templates (§4.1, Table 8)."""
    triples = templates.generate(templates.read_slots(slots), templates.load_templates(template_file))
    templates.write_triples(out, triples)
    counts = {lab: sum(t.label == lab for t in triples) for lab in data.LABELS}
    premises = len({(t.line, t.premise) for t in triples})
    typer.echo(f"wrote {len(triples)} triples from {premises} premises to {out} "
               f"({', '.join(f'{k} {v}' for k, v in counts.items())})")

