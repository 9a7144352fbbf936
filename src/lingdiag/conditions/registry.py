"""The condition expanders of a run: every axis module of this package (and any a third party's
``lingdiag.plugins`` entry point imports), each registered by the module itself, in the order each
declares. Adding an axis is one module that calls :func:`register_axis`: nothing here changes.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from importlib import import_module

from lingdiag import conditions
from lingdiag.conditions.expander import Expander
from lingdiag.config import RunConfig
from lingdiag.registry import load_plugins

Build = Callable[[RunConfig], Expander]
_AXES: dict[str, tuple[int, Build]] = {}


def register_axis(name: str, order: int) -> Callable[[Build], Build]:
    """Register the axis ``name`` built by the decorated ``of(config) -> Expander``; ``order`` places it
    among the others (thinking 10, after-thinking 20, scoring policies 30, precision 40): an axis that
    wraps another's conditions comes after it.
    """

    def add(build: Build) -> Build:
        _AXES[name] = (order, build)
        return build

    return add


def _discover() -> None:
    """Import every module of this package: each registers its axis (and its ``meta.json`` part)."""
    for module in pkgutil.iter_modules(conditions.__path__):
        import_module(f"{conditions.__name__}.{module.name}")


def axes() -> list[str]:
    """The registered axes' names, in order: this package's and the plug-ins' (their entry points)."""
    load_plugins()
    return [name for name, _ in sorted(_AXES.items(), key=lambda kv: (kv[1][0], kv[0]))]


def expanders(config: RunConfig) -> list[Expander]:
    """Every expander, built from ``config`` (options checked, files read, here), in order."""
    return [_AXES[name][1](config) for name in axes()]


_discover()
