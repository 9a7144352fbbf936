"""``lingdiag view``: a local, read-only web app over every run and study under the given directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lingdiag.cli.app import app, err
from lingdiag.cli.options import RESULTS
from lingdiag.errors import ConfigError
from lingdiag.io.terminal import plain

LOCAL = "127.0.0.1"


@app.command(rich_help_panel=RESULTS)
def view(
    dirs: Annotated[list[Path] | None, typer.Argument(help="Directories of runs and studies (default: .).")] = None,
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).", min=0, max=65535)] = 8765,
    host: Annotated[str, typer.Option(help="Address to listen on; anything but 127.0.0.1 shows your runs to "
                                           "whoever reaches it.")] = LOCAL,
) -> None:
    """Browse runs and studies live: run list and state, reports, items with filters and search, item
    pages, paired comparisons (counts and McNemar as `compare`), token surprisal. Needs the `view` extra.
    """
    from lingdiag.view.server import bind, serve

    roots = dirs or [Path(".")]
    for d in roots:
        if not d.is_dir():
            raise ConfigError(f"{d}: not a directory")
    if host != LOCAL:
        err.print(plain(f"warning: listening on {host}: anyone who can reach this address can read these runs"),
                  markup=False, highlight=False)
    try:
        sock = bind(host, port)
    except OSError as e:
        raise ConfigError(f"--host {host} --port {port}: cannot listen: {e.strerror or e}") from None
    name, bound = sock.getsockname()[:2]
    shown = f"[{name}]" if ":" in name else name
    print(f"lingdiag view: http://{shown}:{bound}/ (Ctrl-C to stop)", flush=True)
    serve(roots, sock)
