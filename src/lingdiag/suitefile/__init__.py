"""Suite files: a diagnostic described in one YAML file, run like a built-in suite.

``lingdiag run PATH.yaml`` and every command that takes a suite name take a path ending in
``.yaml``/``.yml``: the suite registry resolves it here (``load_suite``) into an ordinary
``Suite``. Modules: ``source`` (safe YAML), ``schema`` (the format), ``templates`` (sandboxed
jinja2), ``data`` (items), ``parsers``, ``prompt`` (generation), ``choice`` (log-likelihood),
``metrics``, ``figures`` (declared figures and breakdown tables), ``load`` (checks),
``check`` (``lingdiag suite check``) and ``build`` (the ``Suite``). ``docs/suites.md`` is the reference.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lingdiag.suite import SUITES, Suite
from lingdiag.suitefile.build import suite_of
from lingdiag.suitefile.load import Compiled, compile_file

SUFFIXES = (".yaml", ".yml")
_CACHE: dict[tuple[Path, str], Suite] = {}


def load_compiled(path: Path) -> tuple[Compiled, Suite]:
    """The checked file and its suite (not registered)."""
    compiled, conditions, labels = compile_file(Path(path), SUITES.names())
    return compiled, suite_of(compiled, conditions, labels)


def load_suite(path: Path) -> Suite:
    """The suite described by ``path``, checked in full.

    Never registered under its name: two versions of one file (a run's copy and the file as it is
    now, or two runs' copies) are two suites, each object carrying its own source, and whoever
    holds a run holds its suite (``lingdiag.reading.LoadedRun.suite``) instead of looking it up.

    Raises:
        ConfigError: one line naming the file, the key path and what was expected.
    """
    path = Path(path)
    try:
        key = (path.resolve(), hashlib.sha256(path.read_bytes()).hexdigest())
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    _, suite = load_compiled(path)
    if key is not None:
        _CACHE[key] = suite
    return suite


def _resolve(name: str) -> Suite | None:
    return load_suite(Path(name)) if name.lower().endswith(SUFFIXES) else None


SUITES.add_resolver(_resolve)

__all__ = ["SUFFIXES", "load_compiled", "load_suite"]
