"""The HTTP side of ``lingdiag view``: one starlette app answering GET only, every response with the
report's Content-Security-Policy (no script) and ``nosniff``; uvicorn serving it on a socket bound
before the URL is printed (so ``--port 0`` prints the port it got).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lingdiag.errors import LingdiagError, MissingDependency
from lingdiag.io.terminal import plain
from lingdiag.report.html import csp
from lingdiag.view import pages
from lingdiag.view.app import PAGES, NotFound, Viewer
from lingdiag.view.files import SERVED, Refused, read_text

HEADERS = {"Content-Security-Policy": csp(), "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}
"""Sent with every response."""


def _status(e: LingdiagError) -> int:
    return 403 if isinstance(e, Refused) else 404 if isinstance(e, NotFound) else 400


WILDCARDS = ("0.0.0.0", "::")
"""Addresses that listen on every interface of the machine."""


def own_names(host: str) -> list[str]:
    """The ``Host`` names a server listening on ``host`` answers: that address (and ``localhost``);
    on a wildcard address, every address of the machine's interfaces and its host names. A page of
    another site whose name was rebound to this machine's address (DNS rebinding) sends its own name
    and is refused, so it cannot read the runs through the user's browser.
    """
    if host not in WILDCARDS:
        return [host, f"[{host}]", "localhost"]
    import psutil

    addresses = {a.address.split("%")[0] for found in psutil.net_if_addrs().values() for a in found
                 if a.family in (socket.AF_INET, socket.AF_INET6)}
    names = {"localhost", socket.gethostname(), socket.getfqdn()}
    return sorted({f"[{a}]" if ":" in a else a for a in addresses} | {n for n in names if n})


def app(roots: Sequence[Path], hosts: Sequence[str] = ("127.0.0.1", "localhost"), *, prebuild: bool = True) -> Any:
    """The ASGI app over the runs under ``roots``, answering requests addressed to ``hosts`` only (a page
    of another site that rebinds its name to this address gets 400, not the runs). With ``prebuild``, the
    runs' summaries are read in the background from the start, studies' runs first, so that a study's pages
    find them ready (``lingdiag.view.study.Summaries``).
    """
    try:
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.middleware.trustedhost import TrustedHostMiddleware
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, PlainTextResponse, Response
        from starlette.routing import Route
    except ModuleNotFoundError:
        raise MissingDependency("lingdiag view", "view", ["starlette", "uvicorn"]) from None
    viewer = Viewer(roots)
    if prebuild:
        cat = viewer.catalog()
        studies = {i for g in cat.groups.values() if g.study for i in g.runs}

        def reports() -> None:
            for g in cat.groups.values():
                if g.study:
                    PAGES["/study"](viewer, {"id": g.id})

        viewer.summaries.prebuild([r.path for r in sorted(cat.runs.values(), key=lambda r: r.id not in studies)],
                                  reports)

    def html(draw: Callable[[Viewer, dict[str, str]], str]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return HTMLResponse(draw(viewer, dict(request.query_params)), headers=HEADERS)
            except LingdiagError as e:
                return HTMLResponse(pages.error_page(_status(e), str(e)), _status(e), headers=HEADERS)
            except Exception as e:  # noqa: BLE001 - a bug answers one line and a page with the headers, not a traceback
                said = plain(f"lingdiag view: {request.url.path}: {type(e).__name__}: {' '.join(str(e).split())}")
                print(said[:500], file=sys.stderr, flush=True)
                return HTMLResponse(pages.error_page(500, f"internal error ({type(e).__name__})"), 500,
                                    headers=HEADERS)
        return endpoint

    def raw(request: Request) -> Response:
        name = request.query_params.get("name", "")
        try:
            if name not in SERVED:
                raise Refused(f"{name!r}: not one of the files the viewer serves ({', '.join(SERVED)})")
            text = read_text(viewer.run(request.query_params.get("id", "")).path, name)
        except LingdiagError as e:
            return PlainTextResponse(str(e), _status(e), headers=HEADERS)
        return PlainTextResponse(text, headers=HEADERS)

    def missing(request: Request) -> Response:
        return HTMLResponse(pages.error_page(404, "no such page"), 404, headers=HEADERS)

    routes = [Route(path, html(draw), methods=["GET"]) for path, draw in PAGES.items()]
    routes += [Route("/raw", raw, methods=["GET"]), Route("/{rest:path}", missing, methods=["GET"])]
    return Starlette(routes=routes,
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port`` 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def serve(roots: Sequence[Path], sock: socket.socket) -> None:
    """Serve until interrupted; requests must name the machine as :func:`own_names` says."""
    try:
        import psutil  # noqa: F401 - own_names reads the interfaces' addresses with it
        import uvicorn
    except ModuleNotFoundError:
        raise MissingDependency("lingdiag view", "view", ["starlette", "uvicorn", "psutil"]) from None
    config = uvicorn.Config(app(roots, own_names(str(sock.getsockname()[0]))), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
