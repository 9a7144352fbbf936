"""The condition expanders of a run: every axis module of this package (and any a third party's
``lingdiag.plugins`` entry point imports), each registered by the module itself, in the order each
declares. Adding an axis is one module that calls :func:`register_axis`: nothing here changes.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping
from importlib import import_module

from lingdiag import conditions
from lingdiag.conditions.expander import Expander
from lingdiag.config import RunConfig
from lingdiag.registry import load_plugins

Build = Callable[[RunConfig], Expander]
_AXES: dict[str, tuple[int, Build]] = {}
_FLAGS: dict[str, str] = {}
"""``RunConfig.axes`` key an axis takes (``--temperature``) → its values and meaning, for ``--help``."""


def register_axis(name: str, order: int, flags: Mapping[str, str] | None = None) -> Callable[[Build], Build]:
    """Register the axis ``name`` built by the decorated ``of(config) -> Expander``; ``order`` places it
    among the others (thinking 10, after-thinking 20, scoring policies 30, precision 40): an axis that
    wraps another's conditions comes after it. ``flags``: each run axis it takes (``Expander.takes``) →
    its values and meaning, as ``lingdiag run SUITE --help`` shows it.
    """

    def add(build: Build) -> Build:
        _AXES[name] = (order, build)
        _FLAGS.update(flags or {})
        return build

    return add


def flags() -> dict[str, str]:
    """The run axes every suite takes (``--thinking``, ``--temperature``...) → their values and meaning."""
    axes()
    return dict(sorted(_FLAGS.items()))


def _discover() -> None:
    """Import every module of this package: each registers its axis (and its ``meta.json`` part). Done when
    the axes are first asked for, not on import: a run's reader imports one axis module for its part
    (``lingdiag.registry``), which must not import all of them.
    """
    for module in pkgutil.iter_modules(conditions.__path__):
        import_module(f"{conditions.__name__}.{module.name}")


def axes() -> list[str]:
    """The registered axes' names, in order: this package's and the plug-ins' (their entry points)."""
    load_plugins()
    _discover()
    return [name for name, _ in sorted(_AXES.items(), key=lambda kv: (kv[1][0], kv[0]))]


def expanders(config: RunConfig) -> list[Expander]:
    """Every expander, built from ``config`` (options checked, files read, here), in order."""
    return [_AXES[name][1](config) for name in axes()]

