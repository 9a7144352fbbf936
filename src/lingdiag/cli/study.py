"""``lingdiag study run|status|report``: many models, sizes, checkpoints and languages as one
resumable study directory (``lingdiag.study``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app, err
from lingdiag.cli.options import RUN, json_option, out_option, seed_option
from lingdiag.engine.run import Progress
from lingdiag.errors import ConfigError
from lingdiag.io.terminal import markup_safe, plain, plain_lines
from lingdiag.rundir import Status
from lingdiag.rundir.study import RunEntry
from lingdiag.study.execute import run_study
from lingdiag.study.report import sections, summary_text, write_report
from lingdiag.study.schema import load_study
from lingdiag.study.status import FINAL, grid, summary, to_json

study_app = typer.Typer(no_args_is_help=True, help="Studies: models × sizes × checkpoints × suites, resumable.")
app.add_typer(study_app, name="study", rich_help_panel=RUN)

FAILED_RUNS_EXIT = 3
"""``study run`` exits with this when a run is not done (failed or gave up); ``study status`` says which."""


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{secs:02d}s"


def _print_grid(out: Path) -> None:
    rows = grid(out)
    for r in rows:
        why = f"  {r.reason}" if r.reason else ""
        eta = "–" if r.status in FINAL else _eta(r.eta_seconds)  # none: no study run works on it
        print(plain(f"{r.status:<8} {r.items_done:>6}/{r.items_total:<6} eta {eta:>7}  "
                    f"{r.model} × {r.suite}{why}"))
    s = summary(rows)
    print(plain(f"{s['done']}/{s['runs']} done, {s['running']} running, {s['failed']} failed, "
                f"{s['gave up']} gave up; {s['items_left']} items left, eta {_eta(s['eta_seconds'])}"))


def _progress(entry: RunEntry) -> Progress:
    def line(condition: str, done: int, total: int) -> None:
        err.print(markup_safe(f"  {entry.key} {condition}: {done}/{total}"))

    return line


@study_app.command("run")
def run_cmd(
    file: Annotated[Path, typer.Argument(help="The study file (YAML): models, suites, retries, where.")],
    out: Annotated[Path | None, out_option("The study directory (default: the study file's out).")] = None,
) -> None:
    """Run every (model, suite) run of the study not finished yet; the same command resumes."""
    study = load_study(file)
    where = out or (None if study.out is None else study.base / study.out)
    if where is None:
        raise ConfigError(f"{file}: no study directory: give --out DIR or out: in the study file")
    state = run_study(study, where, say=lambda line: err.print(markup_safe(line)), progress=_progress)
    _print_grid(where)
    if any(e.state.status != Status.DONE for e in state.runs):
        raise typer.Exit(FAILED_RUNS_EXIT)


@study_app.command("status")
def status_cmd(
    directory: Annotated[Path, typer.Argument(help="The study directory.")],
    as_json: Annotated[bool, json_option("Print the grid and its summary as JSON.")] = False,
) -> None:
    """The grid: each run done, running (its lock held), partial, failed (why) or planned; items left; ETA."""
    if as_json:
        print(json.dumps(to_json(grid(directory)), ensure_ascii=False, indent=1))
    else:
        _print_grid(directory)


@study_app.command("report")
def report_cmd(
    directory: Annotated[Path, typer.Argument(help="The study directory.")],
    html: Annotated[Path | None, typer.Option("--html", help="Write the HTML report to this file.")] = None,
    tables: Annotated[Path | None, typer.Option("--tables", help="Write study.md and study.tex here.")] = None,
    seed: Annotated[int, seed_option("Seed of the bootstrap intervals.")] = 0,
) -> None:
    """The study report: findings, the grid, models × conditions, learning curves, the chosen comparisons,
    items across models; on the terminal its findings, unless --html or --tables says where the whole goes.
    """
    if html is None and tables is None:
        found, study = sections(directory, seed=seed)
        print(plain_lines(summary_text(study, found)), end="")
        return
    for path in write_report(directory, html, tables, seed=seed):
        err.print(f"wrote {markup_safe(path)}")
