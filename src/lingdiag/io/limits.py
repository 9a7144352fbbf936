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


def read_regular(path: Path, limit: Limit = RUN_FILE_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

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
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RunError(f"{path}: not a regular file; a run directory holds only regular files")
        bound = int(limit.value)
        data = f.read(bound + 1)
    if len(data) > bound:
        raise RunError(f"{path}: larger than expected; {limit.how_to_raise()}")
    return data


@contextmanager
def open_regular(path: Path, limit: Limit = RUN_FILE_BYTES) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary, checked as :func:`read_regular` checks it (a regular file
    of at most ``limit`` bytes), for a reader that streams it instead of reading it whole.

    A file that grows past ``limit`` while it is read is the reader's to refuse (its bytes counted).

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
        if info.st_size > int(limit.value):
            raise RunError(f"{path}: larger than expected; {limit.how_to_raise()}")
        yield f
