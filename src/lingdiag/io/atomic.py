"""Atomic file writes: every file lingdiag writes goes through :func:`atomic_text`,
:func:`atomic_binary` or :func:`write_atomic`.

The content goes to a fresh temporary file in the target's directory (``tempfile.mkstemp``:
a random name opened with ``O_CREAT | O_EXCL | O_NOFOLLOW``, so no fixed name two writers
could share and no symlink planted at a predictable name is followed), is fsynced, and is
renamed over the target (``os.replace``; a symlink at the target itself is replaced, not
followed). Readers see the old file or the new one, never a torn or mixed one; of two
concurrent writers, the last rename wins whole. A failed write removes its temporary file
and raises :class:`WriteError` naming the file and the reason on one line.
"""

from __future__ import annotations

import codecs
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from lingdiag.errors import WriteError
from lingdiag.io.terminal import plain

TEMP_SUFFIX = ".lingdiag-tmp"
"""Ending of the temporary files (``.<name>.<random>.lingdiag-tmp``); a killed writer may leave one."""


SURROGATES = "lingdiag-replace-surrogates"
"""Codec error handler: a lone surrogate (``"\\ud800"`` from JSON) becomes U+FFFD, where the
``utf-8`` codec's own ``replace`` would write ``?``."""


def _fffd(e: UnicodeError) -> tuple[bytes, int]:
    # Bytes: the UTF-8 encoder accepts only ASCII text from an error handler.
    if not isinstance(e, UnicodeEncodeError):
        raise e
    return "\ufffd".encode() * (e.end - e.start), e.end


codecs.register_error(SURROGATES, _fffd)


def _default_mode() -> int:
    # mkstemp creates 0600; a written file gets the mode a plain open() would give it.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def is_temporary(name: str) -> bool:
    """Whether ``name`` is one of this module's temporary files (left by a killed writer)."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def write_error(path: Path | str, e: OSError) -> WriteError:
    """The one-line error for a failed write of ``path``."""
    return WriteError(f"cannot write {plain(str(path))}: {e.strerror or e}")


@contextmanager
def _replacing(path: Path, binary: bool, newline: str | None) -> Iterator[IO[Any]]:
    """A new temporary file beside ``path``, renamed over it if the block ends normally."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    except OSError as e:
        raise write_error(path, e) from None
    try:
        try:
            os.fchmod(fd, _default_mode())
            with (os.fdopen(fd, "wb") if binary else
                  os.fdopen(fd, "w", encoding="utf-8", errors=SURROGATES, newline=newline)) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            raise write_error(path, e) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_text(path: Path | str, *, newline: str | None = None) -> Iterator[IO[str]]:
    """A UTF-8 text file to write ``path`` through; it replaces ``path`` when the block ends
    without an exception (an exception leaves ``path`` as it was). Lone surrogates (valid in
    JSON, not in UTF-8) are written as U+FFFD.

    Args:
        path: The file to write.
        newline: As for ``open`` (``""`` for the csv module).

    Raises:
        WriteError: The directory or the file cannot be written (read-only, full, a directory).
    """
    with _replacing(Path(path), False, newline) as f:
        yield f


@contextmanager
def atomic_binary(path: Path | str) -> Iterator[IO[bytes]]:
    """A binary file to write ``path`` through, chunk by chunk (a download never held whole); it
    replaces ``path`` when the block ends without an exception, and an exception (a failed checksum,
    a refused size) leaves ``path`` as it was.

    Raises:
        WriteError: The directory or the file cannot be written.
    """
    with _replacing(Path(path), True, None) as f:
        yield f


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, lone surrogates as U+FFFD) to ``path`` atomically.

    Raises:
        WriteError: ``path`` cannot be written; the message names it and the reason.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", errors=SURROGATES)
    with _replacing(Path(path), True, None) as f:
        f.write(data)


def make_dir(path: Path | str) -> Path:
    """Create directory ``path`` (and its parents) if missing; ``WriteError`` if it cannot be."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(path, e) from None
    return path
