"""``lingdiag imperfective analyze|similarity``: the cross-run and representational analyses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.errors import ConfigError
from lingdiag.metrics.core import markdown_table
from lingdiag.records import dumps
from lingdiag.run import spread
from lingdiag.suites.imperfective import analysis
from lingdiag.suites.imperfective.files import load
from lingdiag.suites.imperfective.similarity import load_encoder, similarity_analysis, tbr_by_class

app = typer.Typer(no_args_is_help=True, help="ImperfectiveNLI analyses (paper §5.2-5.4).")


def _sizes(pairs: list[str]) -> dict[str, float]:
    out = {}
    for pair in pairs:
        model, eq, size = pair.rpartition("=")
        if not eq or not model:
            raise ConfigError(f"--size {pair!r}: expected MODEL=SIZE, e.g. Qwen2.5-7B-Instruct=7B")
        out[model] = analysis.parse_size(size)
    return out


@app.command()
def analyze(
    runs: Annotated[list[Path], typer.Argument(help="ImperfectiveNLI run directories (models × strategies).")],
    size: Annotated[list[str] | None, typer.Option(
        "--size", help="MODEL=SIZE (e.g. 7B), overriding meta.json (repeatable).")] = None,
    strategy: Annotated[str, typer.Option(help="Condition for the model-scale and ANOVA parts.")] = "zero-shot",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Prompt trade-off (§5.2), model scale (§5.3) and the verb-class ANOVA (footnote 4)."""
    rows, sizes = analysis.load_runs(runs)
    result = analysis.analyze(rows, {**sizes, **_sizes(size or [])}, strategy)
    if as_json:
        print(dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(analysis.to_markdown(result))


@app.command()
def similarity(
    model: Annotated[str, typer.Option("--model", "-m", help="hf:<hub id or dir> or an embedded model name.")],
    dataset: Annotated[str, typer.Option(help="builtin, official, or a path.")] = "builtin",
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="Run directory whose per-class TBR_C to correlate with (repeatable; averaged over models).",
    )] = None,
    strategy: Annotated[str, typer.Option(help="Condition of the runs whose TBR_C is used.")] = "zero-shot",
    layer: Annotated[int, typer.Option(help="Hidden-state layer (0 = embeddings, -1 = last).")] = -1,
    limit: Annotated[int | None, typer.Option(help="Use this many group C/D items, spread over the dataset.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Cosine similarity of "was V-ing" and "V-ed" embeddings per verb class (§5.4, Figure 4)."""
    items = [it for it in load(dataset).items if it.tags.get("group") in ("C", "D")]
    tbr = tbr_by_class(analysis.load_runs(run)[0], strategy) if run else None
    result = similarity_analysis(spread(items, limit), load_encoder(model), layer, tbr)
    if as_json:
        print(dumps(result.to_json(), indent=2, ensure_ascii=False))
        return
    print(f"## Process vs. result similarity ({result.model}, layer {result.layer})\n")
    print(markdown_table(
        ["Verb class", "n", "Median cosine", "Mean cosine", f"TBR_C ({strategy})"],
        [[k, s.n, s.median, s.mean, (result.tbr_by_class or {}).get(k)] for k, s in result.by_class.items()]))
    if result.tbr_by_class is not None:
        c = result.correlation
        print("median similarity vs TBR_C over telic classes: " +
              ("undefined (needs ≥ 3 classes with varying values)" if c is None else
               f"Pearson r = {c.r:.2f}, p = {c.p:.2f} (n = {c.n})"))
    if result.skipped:
        print(f"skipped (no 'was/were V-ing' ↔ 'V-ed' alignment): {', '.join(result.skipped)}")
