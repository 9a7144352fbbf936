"""``lingdiag imperfective analyze|similarity``: the cross-run and representational analyses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.errors import ConfigError
from lingdiag.io.markdown import markdown_table
from lingdiag.reading.door import FINAL, PARTIAL, accepted, marks_note
from lingdiag.records import dumps
from lingdiag.suite import spread
from lingdiag.suites.imperfective import SUITE, analysis
from lingdiag.suites.imperfective.files import load
from lingdiag.suites.imperfective.similarity import layer_sweep, load_encoder, n_layers, tbr_by_class

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
    partial: Annotated[bool, typer.Option("--partial", help="Also read runs whose numbers are not final "
                                                            "(stopped, stale, with failed items), marked.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Prompt trade-off (§5.2), model scale (§5.3) and the verb-class ANOVA (footnote 4)."""
    let_in = accepted(runs, PARTIAL if partial else FINAL)
    rows, sizes = analysis.load_runs(let_in)
    result = analysis.analyze(rows, {**sizes, **_sizes(size or [])}, strategy)
    if as_json:
        print(dumps(result.to_json() | {"not_final": {str(r.path): r.mark for r in let_in if r.mark}}, indent=2,
                    ensure_ascii=False))
    else:
        print(marks_note(let_in) + analysis.to_markdown(result))


def _layers(text: str, count: int) -> list[int]:
    """``all`` → every hidden state 0..count-1; else a comma list of integers."""
    if text.strip() == "all":
        return list(range(count))
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--layer {text!r}: expected an integer, a comma list or 'all'") from None


@app.command()
def similarity(
    model: Annotated[str, typer.Option("--model", "-m", help="hf:<hub id or dir> or an embedded model name.")],
    dataset: Annotated[str | None, typer.Option(help="builtin, official, or a path (default: the suite's "
                                                     "default dataset, builtin).")] = None,
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="Run directory whose per-class TBR_C to correlate with (repeatable; averaged over models).",
    )] = None,
    strategy: Annotated[str, typer.Option(help="Condition of the runs whose TBR_C is used.")] = "zero-shot",
    layer: Annotated[str, typer.Option(help="Hidden-state layer (0 = embeddings, -1 = last), a comma list, "
                                            "or 'all' for a layer-by-layer sweep.")] = "-1",
    limit: Annotated[int | None, typer.Option(help="Use this many group C/D items, spread over the dataset.")] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda, cuda:N or auto (every visible GPU): where the "
                                             "encoder runs, in float32 (as the transformers backend's "
                                             "--model-option device).")] = "cpu",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Cosine similarity of "was V-ing" and "V-ed" embeddings per verb class (§5.4, Figure 4)."""
    items = [it for it in load(dataset or SUITE.default_dataset).items if it.tags.get("group") in ("C", "D")]
    tbr = tbr_by_class(analysis.load_runs(accepted(run))[0], strategy) if run else None
    encoder = load_encoder(model, device)
    results = layer_sweep(spread(items, limit), encoder, _layers(layer, n_layers(encoder)), tbr)
    if as_json:
        payload = [r.to_json() for r in results]
        print(dumps(payload[0] if len(payload) == 1 else payload, indent=2, ensure_ascii=False))
        return
    if len(results) > 1:
        print(f"## Process vs. result similarity by layer ({encoder.name})\n")
        classes = list(results[0].by_class)
        print(markdown_table(
            ["Layer", *classes, "r (median vs TBR_C)", "p"],
            [[r.layer, *(r.by_class[k].median for k in classes),
              None if r.correlation is None else r.correlation.r, None if r.correlation is None else r.correlation.p]
             for r in results]))
        return
    result = results[0]
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
