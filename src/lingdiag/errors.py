"""The lingdiag error tree.

Every error the library raises on purpose derives from one base, so a caller can catch
them all and nothing else::

    LingdiagError
    ├── ConfigError          a run configuration or CLI option is invalid
    │   └── ConfigErrors     several independent problems of one input (each one line)
    ├── UnknownNameError     a model, strategy, suite or dataset name is not registered
    ├── DatasetError         a data file is missing, malformed, or fails its checksum
    ├── BackendError         a model backend failed or cannot serve a request kind
    │   └── CapabilityError  the backend cannot serve this kind of request at all
    ├── MissingDependency    an optional package is needed for this feature
    ├── RunError             a run directory is inconsistent with the requested run
    ├── CacheError           the response cache cannot be read or changed
    └── WriteError           an output file cannot be written

A pydantic validation error (a config file, options, a recorded config, a suite file) reads
the same wherever it comes from: ``SOURCE: FIELD: what is wrong`` (``one_line``,
``validation_lines``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails


class LingdiagError(Exception):
    """Base of every error lingdiag raises on purpose."""


def located(error: LingdiagError, where: str) -> LingdiagError:
    """``error``, of its own class and with its attributes, its message opened by ``where`` it happened
    (``study.yaml: run a/nli (models[0]/suites[0]): …``), whatever that class's constructor takes.
    """
    out = type(error).__new__(type(error))
    out.__dict__.update(error.__dict__)
    Exception.__init__(out, f"{where}: {error}")
    return out


class ConfigError(LingdiagError):
    """A run configuration or CLI option is invalid."""


class ConfigErrors(ConfigError):
    """Several independent problems of one input (a suite file), found in one pass so that a user
    fixes them in one round: each is one line, and the message is the lines joined.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


class UnknownNameError(LingdiagError):
    """A registry lookup failed; the message lists the valid names."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]) -> None:
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(self.valid) or '(none)'}")


class DatasetError(LingdiagError):
    """A data file is missing or malformed; the message names file, row (or line) and field."""

    def __init__(self, message: str, *, path: object = None, row: int | None = None,
                 field: str | None = None, line: int | None = None) -> None:
        where = [str(x) for x in (path,) if x is not None]
        if line is not None:
            where.append(f"line {line}")
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field {field!r}")
        self.path, self.row, self.field, self.line = path, row, field, line
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class BackendError(LingdiagError):
    """A model backend failed."""


class CapabilityError(BackendError):
    """The backend cannot serve this kind of request (e.g. prompt log-probs over a chat API)."""


class MissingDependency(LingdiagError):
    """An optional dependency is missing; the message says what to install."""

    def __init__(self, feature: str, extra: str, packages: Iterable[str]) -> None:
        pkgs = " ".join(packages)
        super().__init__(f"{feature} needs: pip install 'lingdiag[{extra}]' (or: pip install {pkgs})")


class RunError(LingdiagError):
    """A run directory cannot be resumed with the requested configuration."""


class CacheError(LingdiagError):
    """The response cache cannot be read or changed (read-only, full disk); runs go on without it."""


class WriteError(LingdiagError):
    """An output file cannot be written (read-only, full disk, a directory in the way)."""


BOOLEAN_HINT = "YAML reads a bare yes, no, on, off, true or false as a boolean: quote it (\"yes\")"
"""Said wherever a boolean was given where text was expected (``labels: [yes, no]``)."""

_SHOWN = 60
"""How much of a wrong value a message quotes."""


_MEMBER = re.compile(r"<\w+\.\w+: ('[^'<>]*')>")
"""An enum member as pydantic's message shows it (``<Status.DONE: 'done'>``): its word is what a file holds."""


def field_problem(error: ErrorDetails) -> tuple[str, str]:
    """``(FIELD, what is wrong)`` of one pydantic error: the dotted key path (an unknown key named
    in it), the message, and the value given, unless the error is about a key, already says what
    it found (a custom error whose context holds ``key`` or ``found``), or is about the whole
    input (no key path: the value would be everything given, credentials included).
    """
    loc = [str(x) for x in error["loc"]]
    ctx = error.get("ctx") or {}
    if "key" in ctx:
        loc.append(str(ctx["key"]))
    if error["type"] == "extra_forbidden":
        return ".".join(loc), "unknown key"
    msg = error["msg"].removeprefix("Value error, ")
    if error["type"] == "literal_error":  # a choice among enum members said as the words a file holds
        msg = _MEMBER.sub(r"\1", msg)
    if loc and error["type"] != "missing" and not {"key", "found"} & set(ctx) and "input" in error:
        shown = repr(error["input"])
        msg += f" (got {shown if len(shown) <= _SHOWN else shown[:_SHOWN - 3] + '...'})"
        if isinstance(error["input"], bool):
            msg += f"; {BOOLEAN_HINT}"
    return ".".join(loc), msg


def validation_lines(e: ValidationError, source: object = None, root: str = "") -> list[str]:
    """Every problem of a pydantic validation, one line each, as ``SOURCE: FIELD: what is wrong``
    (the same problem once).

    Args:
        e: The validation error.
        source: What was validated: a file, or words such as ``suite 'explica'``; None: nothing.
        root: The key path of the validated value inside its source (``config`` in ``meta.json``).
    """
    lines = []
    for error in e.errors():
        field, problem = field_problem(error)
        where = ".".join(p for p in (root, field) if p)
        lines.append(": ".join(str(p) for p in (source, where, problem) if p is not None and p != ""))
    return list(dict.fromkeys(lines))


def one_line(e: ValidationError, source: object = None, root: str = "") -> str:
    """The first problem of a pydantic validation as ``SOURCE: FIELD: what is wrong``."""
    return validation_lines(e, source, root)[0]
