"""The ``lingdiag`` command line: thin commands that build a ``RunConfig`` and call the library.

Suite axes become options automatically (``lingdiag run imperfective --strategy zero-shot,cot``).
Each suite's own commands (``Suite.cli``) are mounted as ``lingdiag <suite>`` and its score
command (``Suite.score_cli``) as ``lingdiag score <suite>``, its reproduction
(``Suite.reproduce_cli``) as ``lingdiag reproduce <suite>``. Nothing in the library imports
this package.

Modules, one per command or group: ``app`` (the typer app and its groups), ``options`` (the options every
command shares), ``run``, ``progress`` (what ``run`` says while it works), ``cluster`` (``merge``,
``submit``), ``compare`` (``compare``, ``competence``, ``mixed``), ``data`` (``data
fetch|stats|build|audit``), ``audit_view``, ``human``, ``cache``, ``score``, ``suite_file`` (``suite
check|score``), ``report``, ``inspect``, ``info`` (``list``, ``models``), ``env``, ``adapt``, ``study``
(``study run|status|report``), ``view``, ``items`` (``items fit|anchors|estimate``), ``interop`` (``import
lm-eval|inspect|eee``, ``reread``, ``export``).
"""

from __future__ import annotations

import os
import resource
import sys

from lingdiag.cli import (  # noqa: F401  (registers the commands)
    adapt,
    cache,
    cluster,
    compare,
    data,
    env,
    human,
    info,
    inspect,
    interop,
    items,
    report,
    run,
    study,
    suite_file,
    view,
)
from lingdiag.cli.app import app, err, reproduce_app, score_app
from lingdiag.cli.options import SUITE_TOOLS
from lingdiag.cli.run import axes_help
from lingdiag.cli.score import finishing, label_score_command
from lingdiag.errors import ConfigErrors, LingdiagError
from lingdiag.io.terminal import plain
from lingdiag.suite import SUITES

# The package's surface: the typer app (tests drive it with CliRunner), and the entry point.
__all__ = ["app", "main", "mount_suites"]


def mount_suites() -> None:
    """Add every registered suite's command group and score command."""
    for name in SUITES.names():
        suite = SUITES.get(name)
        if suite.cli is not None:
            app.add_typer(suite.cli(), name=name, rich_help_panel=SUITE_TOOLS)
        if suite.score_cli is not None:
            score_app.command(name)(finishing(suite, suite.score_cli()))
        elif suite.parse_answer is not None:
            score_app.command(name)(finishing(suite, label_score_command(suite)))
        if suite.reproduce_cli is not None:
            reproduce_app.command(name)(suite.reproduce_cli())


def main() -> None:
    """Entry point: lingdiag errors print one clear line and exit 2."""
    # transformers' per-load progress bars would interleave with lingdiag's own.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if not sys.stderr.isatty():  # a log: tqdm's \r frames (GGUF conversion) would fill it; lingdiag says the stage
        os.environ.setdefault("TQDM_DISABLE", "1")
    mount_suites()
    try:
        axes_help(sys.argv)
        app()
    except LingdiagError as e:
        # Messages quote paths, ids and cells from outside: one line each, no control characters.
        for line in e.problems if isinstance(e, ConfigErrors) else (str(e),):
            err.print("[red]error:[/]", end=" ")
            err.print(plain(line), markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except MemoryError:
        # A limit of the machine (ulimit -v on a login node), not a fault to trace: one line. What was
        # computed is on disk already (a run appends chunk by chunk); what is read whole is not.
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        where = "" if limit == resource.RLIM_INFINITY else f" (an address-space limit of {limit // 2**20:,} MiB)"
        command = plain(" ".join(["lingdiag", *sys.argv[1:2]]))
        err.print(f"error: out of memory{where}: {command} needs more than this process may use here; run it "
                  "where more memory is allowed", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
