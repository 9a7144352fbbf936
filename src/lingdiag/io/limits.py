"""The bounds on work a small untrusted file can ask for, in one place, each raisable from the
environment by a user who means it (``docs/suites.md``, "Limits").

A suite file, a template or a server is someone else's text: a few lines can ask for 2^40
conditions, a template can write gigabytes or loop for hours, a server can send a body without
end or a byte a second. Each bound below is far above anything a real suite or server needs;
passing one is a one-line error that names the bound and the variable that raises it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from lingdiag.errors import ConfigError, RunError


@dataclass(frozen=True, slots=True)
class Limit:
    """One bound: its default and the environment variable that overrides it."""

    variable: str
    default: float
    what: str
    """What is counted, for the message (``conditions``, ``characters of template output``)."""

    @property
    def value(self) -> float:
        """The bound in force: the variable's value if set, else the default."""
        raw = os.environ.get(self.variable)
        if raw is None or raw.strip() == "":
            return self.default
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise ConfigError(f"{self.variable}={raw!r}: expected a positive number")
        return value

    def how_to_raise(self) -> str:
        """The sentence that ends each refusal."""
        return f"the limit is {self.value:g} {self.what}; raise it with {self.variable}=N if you mean it"


MAX_CONDITIONS = Limit("LINGDIAG_MAX_CONDITIONS", 1000, "conditions")
"""Conditions one suite file may expand to (the product of its axes' value counts)."""
MAX_STUDY_RUNS = Limit("LINGDIAG_MAX_STUDY_RUNS", 10_000, "runs")
"""Runs one study file may plan (models and checkpoints × suites and languages)."""
TEMPLATE_CHARS = Limit("LINGDIAG_TEMPLATE_MAX_CHARS", 1_000_000, "characters of template output")
"""Characters one rendering of a suite-file or chat template may write."""
TEMPLATE_SECONDS = Limit("LINGDIAG_TEMPLATE_SECONDS", 5, "seconds per template rendering")
"""Seconds one template may take to compile or render."""
FETCH_BYTES = Limit("LINGDIAG_FETCH_MAX_BYTES", 256 * 2**20, "bytes per fetched file")
"""Bytes one official file (``data fetch``, ``--from``) may hold; read in chunks and refused past it."""
RUN_FILE_BYTES = Limit("LINGDIAG_RUN_FILE_MAX_BYTES", 2 * 1024**3, "bytes per run-directory file")
"""Bytes one file of a run directory (``items.jsonl``, ``meta.json``...) may hold when read back."""
STUDY_STATE_BYTES = Limit("LINGDIAG_STUDY_STATE_MAX_BYTES", 64_000_000, "bytes of a study.json")
"""Bytes of a study's ``study.json`` (tens of thousands of runs)."""
MODEL_CONFIG_BYTES = Limit("LINGDIAG_MODEL_CONFIG_MAX_BYTES", 16 * 1024**2, "bytes of a model's config.json")
"""Bytes of the ``config.json`` beside a model's weights, read for its family (``report/scaling.py``)."""


CHUNK = 1 << 20
"""Bytes read at a time past what ``fstat`` said (a file that grows while it is read)."""


@contextmanager
def open_regular(path: Path, limit: Limit = RUN_FILE_BYTES) -> Iterator[BinaryIO]:
    """``path`` opened for binary reading, once checked to be a regular file of at most ``limit``
    bytes now (a reader that goes on while a writer appends checks the bound itself).

    Opened without blocking and checked on the open descriptor, so a FIFO (which would wait for a
    writer forever) or a link to ``/dev/zero`` (which never ends) is refused, not read.

    Raises:
        RunError: not a regular file, too large, or unreadable; one line naming ``path``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise RunError(f"cannot read {path}: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RunError(f"{path}: not a regular file; a run directory holds only regular files")
        if info.st_size > limit.value:
            raise too_large(path, limit)
        yield f


def too_large(path: Path, limit: Limit) -> RunError:
    """The one-line refusal of a file past ``limit``."""
    return RunError(f"{path}: larger than expected; {limit.how_to_raise()}")


def read_regular(path: Path, limit: Limit = RUN_FILE_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    The file's own size is allocated, never the bound (a 2 GiB buffer for a 1 KB file fails under
    an address-space limit); past what ``fstat`` said, it is read in chunks up to the bound.

    Raises:
        RunError: not a regular file (see :func:`open_regular`), too large, or unreadable; one
            line naming ``path``.
    """
    bound = int(limit.value)
    with open_regular(path, limit) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            data = f.read(size + 1)
            if len(data) > size:  # it grew since: the rest in chunks, one past the bound at most
                parts, total = [data], len(data)
                while total <= bound and (chunk := f.read(min(CHUNK, bound + 1 - total))):
                    parts.append(chunk)
                    total += len(chunk)
                data = b"".join(parts)
        except OSError as e:
            raise RunError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > bound:
        raise too_large(path, limit)
    return data


def regular_lines(path: Path, limit: Limit = RUN_FILE_BYTES) -> Iterator[bytes]:
    """The lines of ``path`` (each ending with a newline but perhaps the last), one at a time: the file
    is never held whole. Split at line feeds only (model text may hold U+2028, which JSON leaves as it is).

    Raises:
        RunError: not a regular file, past ``limit`` (checked as it is read: the file may grow),
            or unreadable; one line naming ``path``.
    """
    bound = limit.value
    with open_regular(path, limit) as f:
        total = 0
        try:
            for line in f:
                total += len(line)
                if total > bound:
                    raise too_large(path, limit)
                yield line
        except OSError as e:
            raise RunError(f"cannot read {path}: {e.strerror or e}") from None
