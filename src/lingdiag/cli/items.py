"""``lingdiag items fit|anchors|estimate``: item response models over runs and studies
(``lingdiag.items``).

The item modules (numpy, scipy) are imported when a command runs, not when ``lingdiag`` starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from lingdiag.cli.app import app, err
from lingdiag.cli.options import RESULTS, Partial, json_option, out_option, seed_option
from lingdiag.errors import ConfigError
from lingdiag.io.terminal import plain

if TYPE_CHECKING:
    from lingdiag.items.irt import Kind

items_app = typer.Typer(no_args_is_help=True, help="Items as evidence: difficulty, discrimination, flags, anchors.")
app.add_typer(items_app, name="items", rich_help_panel=RESULTS)

ModelKind = Literal["1pl", "2pl"]


def _kind(value: str) -> Kind | None:
    from lingdiag.items.irt import KINDS

    if value == "auto":
        return None
    if value not in KINDS:
        raise ConfigError(f"--irt {value!r}: expected auto, 1pl or 2pl")
    return value


def _say(line: str) -> None:
    err.print(plain(line), markup=False, highlight=False, soft_wrap=True)


@items_app.command("fit")
def fit_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Run or study directories.")],
    out: Annotated[Path, out_option("Directory for fit.json, fit.npz, items.csv, models.csv (and .parquet).")],
    irt: Annotated[str, typer.Option("--irt", help="The item model: auto (the 1PL below 30 models, the 2PL from "
                                                   "there), 1pl or 2pl (--model is a model spec everywhere "
                                                   "else).")] = "auto",
    human: Annotated[Path | None, typer.Option(help="Mean human ratings per item: a CSV with id and mean_<label> "
                                                    "columns (as `lingdiag human import` writes).")] = None,
    partial: Partial = False,
) -> None:
    """Fit an item response model per suite and condition: each item's difficulty and discrimination with
    95% intervals, item fit, flags with reasons and human agreement; each model's ability.
    """
    from lingdiag.items.build import fit_and_write
    from lingdiag.reading.door import FINAL, PARTIAL

    built = fit_and_write(dirs, out, _kind(irt), human, PARTIAL if partial else FINAL)
    for line in built.fit.warnings:
        _say(f"warning: {line}")
    for line in (*built.fit.left_out, *built.fit.notes):
        _say(f"note: {line}")
    if built.parquet:
        _say(f"note: {built.parquet}")
    for c in built.fit.cells:
        flagged = sum(bool(f) for f in c.item_flags(built.fit.kind, built.fit.policy))
        print(plain(f"{c.suite} / {c.condition}: {len(c.models)} models, {len(c.item_ids)} items "
                    f"({int(c.fitted.sum())} fitted), {flagged} flagged; {built.fit.why}"
                    f"{'' if c.converged else ', NOT converged'}"))
    print(plain(f"wrote {', '.join(p.name for p in built.written)} in {out}"))


@items_app.command("anchors")
def anchors_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="A directory `items fit` wrote, or run and study directories.")],
    k: Annotated[int, typer.Option("--k", help="Anchors per suite and condition.")] = 100,
    out: Annotated[Path, out_option("The anchors file (JSON) to write.")] = Path("anchors.json"),
    irt: Annotated[str, typer.Option("--irt", help="The item model when fitting here: 1pl (default: from "
                                                    "every answer it predicts the accuracy), 2pl or auto.")] = "1pl",
    seed: Annotated[int, seed_option("Seeds the k-means of the anchors.")] = 0,
    validate: Annotated[bool, typer.Option(help="Measure the estimate's error by leaving models out.")] = True,
) -> None:
    """Choose K anchor items per suite and condition (tinyBenchmarks' IRT clustering) and measure how far
    an estimate from them falls from the real accuracy, by leaving each model out.
    """
    if k < 1:
        raise ConfigError(f"--k {k}: expected 1 or more anchors")
    from lingdiag.items.anchors import anchor_cells, save_anchors
    from lingdiag.items.build import fit_runs
    from lingdiag.items.fitted import FIT_JSON, load

    fit = load(dirs[0]) if len(dirs) == 1 and (dirs[0] / FIT_JSON).is_file() else fit_runs(dirs, _kind(irt))
    chosen = anchor_cells(fit, k, seed, validate)
    save_anchors(chosen, out)
    for c in chosen.cells:
        error = f"not measured ({c.unmeasured})" if c.measured_error is None else \
            f"{c.measured_error:.3f} (root-mean-square, {len(c.validation)} models left out in turn)"
        method = "IRT anchors, p-IRT estimate" if c.method == "irt" else \
            f"random items, their mean: the IRT anchors' error was {c.irt_error:.3f}, above random items'"
        print(plain(f"{c.suite} / {c.condition}: {len(c.anchors.index)} anchors of {len(c.item_ids)} items "
                    f"({method}); measured error {error}"))
    print(plain(f"wrote {out}"))


@items_app.command("estimate")
def estimate_cmd(
    run: Annotated[Path, typer.Argument(help="A run directory (it may hold only the anchors: run --items FILE).")],
    anchors: Annotated[Path, typer.Option("--anchors", help="The anchors file `items anchors` wrote.")],
    condition: Annotated[str | None, typer.Option(help="Only this condition.")] = None,
    as_json: Annotated[bool, json_option("Print the estimate and its interval as JSON.")] = False,
) -> None:
    """The run's accuracy over every item of each anchored condition, from its answers to the anchors alone."""
    from lingdiag.items.anchors import estimate_run, load_anchors
    from lingdiag.items.chance import finite
    from lingdiag.reading import load_run

    chosen = load_anchors(anchors)  # an anchors file that is not one is refused before the run is read
    loaded = load_run(run)
    found = estimate_run(chosen, loaded, condition)
    state = loaded.state.line if loaded.state else None
    cells = [{"suite": c.suite, "condition": c.condition, "estimate": round(e.estimate, 6),
              "interval": [round(e.low, 6), round(e.high, 6)], "anchors_answered": e.anchors_answered,
              "anchors": len(c.anchors.index), "items": e.items, "method": c.method,
              "measured_error": c.measured_error, "ability": finite(round(e.ability, 6)),
              "model_sd": finite(round(e.model_sd, 6)), "interval_basis": e.basis, "bias": e.bias}
             for c, e in found]
    if as_json:
        one = {"estimate": cells[0]["estimate"], "interval": cells[0]["interval"]} if len(cells) == 1 else {}
        print(json.dumps({**one, "cells": cells, "run_state": state}, ensure_ascii=False, indent=1, allow_nan=False))
        return
    if state:
        _say(f"note: {state}")
    for c, e in found:
        print(plain(f"{c.suite} / {c.condition}: accuracy {e.estimate:.3f}, 95% interval [{e.low:.3f}, {e.high:.3f}] "
                    f"({e.basis}); from {e.anchors_answered} of {len(c.anchors.index)} anchors, over {e.items} "
                    f"items; bias: {e.bias}"))
