"""``lingdiag merge`` and ``lingdiag submit``: item shards as cluster jobs, joined into one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from lingdiag.cli.app import app, err
from lingdiag.cli.options import RUN, out_option
from lingdiag.cli.run import FAILED_ITEMS_EXIT, build_config
from lingdiag.cluster import EXECUTORS, Resources, SubmitOptions, merge, submit
from lingdiag.config import RunConfig
from lingdiag.engine.run import default_out
from lingdiag.errors import ConfigError, RunError
from lingdiag.io.terminal import markup_safe, plain_lines


@app.command("merge", rich_help_panel=RUN)
def merge_cmd(
    shards: Annotated[list[Path], typer.Argument(help="Every shard's run directory (lingdiag run --shard K/N).")],
    out: Annotated[Path, out_option("The merged run directory.")],
) -> None:
    """Join the shards of one run into a run directory equal to the unsharded run's."""
    result = merge(shards, out)
    print(plain_lines(result.table))
    err.print(f"merged {len(shards)} shards into {markup_safe(result.out)}")
    _exit_if_failed(result.metrics)


def _run_arguments(args: list[str]) -> tuple[RunConfig, dict[str, Any]]:
    """Parse ``lingdiag run`` arguments exactly as ``lingdiag run`` does."""
    group = typer.main.get_command(app)
    command = group.commands["run"]  # type: ignore[attr-defined]
    with command.make_context("lingdiag run", list(args)) as ctx:
        return build_config(ctx.params, list(ctx.args)), dict(ctx.params)


def _base_urls(path: Path | None) -> tuple[str, ...]:
    if path is None:
        return ()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"--base-url-per-shard {path}: {e.strerror}") from None
    return tuple(x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#"))


@app.command("submit", rich_help_panel=RUN, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def submit_cmd(
    ctx: typer.Context,
    shards: Annotated[int, typer.Option("--shards", min=1, help="Split the run into N item shards.")],
    executor: Annotated[str, typer.Option(help="local (processes), slurm (a job array) or ray.")] = "local",
    partition: Annotated[str | None, typer.Option(help="SLURM partition.")] = None,
    gpus_per_task: Annotated[int, typer.Option(min=0, help="GPUs per shard (SLURM, Ray).")] = 0,
    cpus_per_task: Annotated[int, typer.Option(min=1, help="CPUs per shard (SLURM, Ray).")] = 1,
    time: Annotated[int, typer.Option(min=1, help="Wall-time limit per shard, minutes.")] = 24 * 60,
    python: Annotated[str | None, typer.Option(help="Command that starts Python in each job (local, slurm), "
                                                    "e.g. 'apptainer exec --nv lingdiag.sif python'.")] = None,
    address: Annotated[str | None, typer.Option(help="Ray cluster address (default: RAY_ADDRESS or a local "
                                                     "cluster).")] = None,
    base_url_per_shard: Annotated[Path | None, typer.Option(help="File with one server URL per line: shard K "
                                                                 "uses line K (openai: models).")] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once submitted; run the same command "
                                          "again later to resubmit what failed and merge.")] = False,
) -> None:
    """Run `lingdiag run` arguments (after --) as N shards on a cluster, then merge into its --out.

    Shards go to OUT/shards/K-of-N and job logs to OUT/jobs; a shard that finished earlier is
    not submitted again, one that failed or was killed resumes.
    """
    if not ctx.args:
        raise ConfigError("give the run after --, e.g. lingdiag submit --shards 4 -- imperfective --model M --out D")
    EXECUTORS.get(executor)
    config, params = _run_arguments(list(ctx.args))
    out = params.get("out_dir") or default_out(config)
    options = SubmitOptions(
        shards=shards, executor=executor, wait=not no_wait, base_urls=_base_urls(base_url_per_shard),
        cache=not params.get("no_cache"),
        resources=Resources(cpus_per_task=cpus_per_task, gpus_per_task=gpus_per_task, time_min=time,
                            partition=partition, python=python, address=address))
    result = submit(config, out, options)
    if result.done:
        err.print(f"already finished, not submitted: shards {', '.join(result.done)}")
    for shard, job in result.submitted.items():
        err.print(f"submitted shard {shard} as job {job}")
    if no_wait:
        err.print(f"run the same command again to merge into {markup_safe(out)} once the jobs have ended")
        return
    failed = {s: o.error for s, o in result.outcomes.items() if o.error}
    if failed:
        raise RunError(f"{len(failed)} of {shards} shards failed: "
                       + "; ".join(f"{s}: {e}" for s, e in failed.items())
                       + ". Run the same command again to resubmit them")
    assert result.merged is not None
    print(plain_lines(result.merged.table))
    err.print(f"merged {shards} shards into {markup_safe(result.merged.out)}")
    _exit_if_failed(result.merged.metrics)


def _exit_if_failed(metrics: dict[str, Any]) -> None:
    failed = sum(int(m.get("n_errors", 0)) for m in metrics.values())
    if failed:
        err.print(f"[red]{failed} items failed (backend errors):[/] metrics are over the answered items; "
                  "run the shards again to retry them")
        raise typer.Exit(FAILED_ITEMS_EXIT)
