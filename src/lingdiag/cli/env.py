"""``lingdiag env``: the installed dependencies beside the tested lock, the torch build, devices and threads."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from lingdiag.cli.app import app, err, out, reproduce_app
from lingdiag.cli.options import SETUP, Json
from lingdiag.models.environment import TorchBuild, lock_status, pins, runtime_packages, torch_build, usable_cpus


def lock_line() -> None:
    """One line on stderr when the installed runtime versions are not the lock's (a researcher
    comparing with a published row must know); nothing when they match.
    """
    line = lock_status().line()
    if line:
        err.print(f"[yellow]note:[/] {line}", highlight=False, soft_wrap=True)


@reproduce_app.callback()
def _reproduce() -> None:
    """Re-score a paper's published outputs beside its tables."""
    lock_line()


@app.command("env", rich_help_panel=SETUP)
def env_cmd(
    show_all: Annotated[bool, typer.Option("--all", help="Also list the locked dev tools (tests, lint).")] = False,
    as_json: Json = False,
) -> None:
    """Installed versions of lingdiag's dependencies beside the lock, the torch build, devices, threads."""
    runtime = runtime_packages()
    rows = [p for p in pins() if show_all or p.name in runtime]
    status = lock_status()
    cpus = usable_cpus()
    try:
        build: TorchBuild | None = torch_build()
        missing = ""
    except ImportError as e:
        build, missing = None, (f"torch is not installed ({e}); the transformers backend needs it: "
                                "pip install torch==2.13.0 (the CPU build), then pip install 'lingdiag[hf]'")
    if as_json:
        torch_info = {"missing": missing} if build is None else asdict(build)
        out.print_json(json.dumps({"lock": status.recorded(), "cpus": cpus, "torch": torch_info,
                                   "packages": [{"name": p.name, "locked": p.locked, "installed": p.installed}
                                                for p in rows]}))
        return
    table = Table("package", "locked", "installed", "", title="lingdiag's dependencies and the tested lock")
    for p in rows:
        mark = "ok" if p.matches else ("not installed" if p.installed is None else "DIFFERS")
        table.add_row(p.name, p.locked, p.installed or "-", mark)
    out.print(table)
    lines = [status.line() or "runtime packages: all at the locked versions"]
    if build is None:
        lines.append(missing)
    else:
        kind = f"CUDA {build.cuda}" if build.cuda else "CPU build"
        lines.append(f"torch {build.version} ({kind}, oneDNN {'yes' if build.onednn else 'no'}); "
                     f"devices: {', '.join(build.devices)}; torch's default threads: {build.threads}")
    lines.append(f"threads: {cpus} (the CPUs this process may use; lingdiag's default for torch)")
    for line in lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
