"""``lingdiag import lm-eval|inspect`` (other harnesses' logs → run directories), ``lingdiag reread``
(their answers read again by lingdiag's reader) and ``lingdiag export --format eee``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app, import_app
from lingdiag.cli.options import RESULTS, Json
from lingdiag.errors import ConfigError
from lingdiag.interop import eee, lmeval
from lingdiag.interop.reread import reread as reread_run
from lingdiag.interop.reread import summary_lines
from lingdiag.interop.runs import HarnessRun, import_all
from lingdiag.io.terminal import plain, plain_lines
from lingdiag.records import dumps

Out = Annotated[Path, typer.Option("--out", help="The directory to write one run directory per model and task "
                                                 "under (<model>/<task>).")]
Choices = Annotated[str | None, typer.Option(help="Comma-separated answers a generation task's answers are read "
                                                  "over, where the log does not give its choices.")]


def _choices(text: str | None) -> list[str] | None:
    if text is None:
        return None
    found = [c.strip() for c in text.split(",") if c.strip()]
    if len(found) < 2:
        raise ConfigError(f"--choices {text!r}: give at least two comma-separated answers")
    return found


@import_app.command("lm-eval")
def import_lm_eval(
    paths: Annotated[list[Path], typer.Argument(help="lm-eval results_*.json files, or directories searched for "
                                                     "them (the samples_*.jsonl files beside each are read).")],
    out: Out,
    choices: Choices = None,
) -> None:
    """lm-eval's --log_samples output → one lingdiag run per model and task (progress on stderr)."""
    files = [f for p in paths for f in lmeval.results_files(p)]
    given = _choices(choices)

    def runs() -> Iterator[HarnessRun]:
        for f in files:
            yield from lmeval.read(f, given)

    print(plain(f"{len(files)} lm-eval results file(s) under {', '.join(map(str, paths))}"), file=sys.stderr)
    for root in import_all(runs(), out, total=sum(len(lmeval.samples_files(f)) for f in files)):
        print(plain(str(root)))


@import_app.command("inspect")
def import_inspect(
    logs: Annotated[list[Path], typer.Argument(help="inspect .eval or .json logs, or directories searched for them.")],
    out: Out,
    choices: Choices = None,
) -> None:
    """inspect_ai's logs → one lingdiag run per model and task, read by inspect's own log reader."""
    from lingdiag.interop import inspect_log

    files = [f for p in logs for f in inspect_log.log_files(p)]
    given = _choices(choices)
    print(plain(f"{len(files)} inspect log(s) under {', '.join(map(str, logs))}"), file=sys.stderr)
    runs = (run for f in files for run in inspect_log.read(f, given))
    for root in import_all(runs, out, total=len(files)):
        print(plain(str(root)))


@import_app.command("eee")
def import_eee(
    records: Annotated[list[Path], typer.Argument(help="Every Eval Ever aggregate records (.json); the instance file "
                                                       "each names is read beside it.")],
    out: Out,
) -> None:
    """Every Eval Ever's shared records → one lingdiag run per model and evaluation."""
    runs = (run for f in records for run in eee.read(f))
    for root in import_all(runs, out):
        print(plain(str(root)))


@app.command(rich_help_panel=RESULTS)
def reread(
    runs: Annotated[list[Path], typer.Argument(help="Run directories imported from lm-eval or inspect.")],
    show: Annotated[int, typer.Option(help="Disagreements listed per run (all with --json).")] = 10,
    as_json: Json = False,
) -> None:
    """Read an imported run's answers with lingdiag's reader: where the harness's extraction and lingdiag's
    disagree (labels the answer did not give, answers left unread), with the accuracy under both.
    """
    results = [r for run in runs for r in reread_run(run)]
    if as_json:
        print(dumps([asdict(r) | {"run": str(r.run)} for r in results], indent=2, sort_keys=True))
        return
    for r, line in zip(results, summary_lines(results), strict=True):
        print(plain(line))
        for d in r.disagreements[:show]:
            print(plain(f"  item {d.item_id}: {d.kind}: {r.harness} {d.harness!r}, lingdiag {d.lingdiag} "
                        f"(gold {d.gold}); answer: {d.answer[:160]!r}"))
        if len(r.disagreements) > show:
            print(f"  … {len(r.disagreements) - show} more (--show N, or --json)")


@app.command(rich_help_panel=RESULTS)
def export(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (lingdiag's own or imported).")],
    out: Annotated[Path, typer.Option("--out", help="The datastore root to write into: data/<collection>/<developer>/"
                                                    "<model>/<uuid>.json (aggregate) and <uuid>_samples.jsonl.")],
    format: Annotated[str, typer.Option("--format", help="eee: Every Eval Ever's schema 0.3.0.")] = "eee",
) -> None:
    """Runs → the field's shared per-item format (Every Eval Ever: aggregate and instance-level records)."""
    if format != "eee":
        raise ConfigError(f"--format {format!r}: the one format written is eee (Every Eval Ever)")
    for path in eee.export(runs, out):
        print(plain_lines(str(path)))
