"""The only way the viewer opens a file: a name inside a run directory it was given, resolved (so a
symlink cannot lead out of the run), a regular file, and no larger than its bound.
"""

from __future__ import annotations

import stat
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.io.limits import Limit

META_BYTES = Limit("LINGDIAG_VIEW_MAX_META_BYTES", 64 * 2**20, "bytes of a run's meta.json, metrics.json or table.md")
"""The small files of a run."""
ITEMS_BYTES = Limit("LINGDIAG_VIEW_MAX_ITEMS_BYTES", 256 * 2**30, "bytes of items.jsonl")
"""A run's records (paged from disk, never read whole)."""
LINE_BYTES = Limit("LINGDIAG_VIEW_MAX_RECORD_BYTES", 256 * 2**20, "bytes of one record")
"""One line of ``items.jsonl``."""

SERVED = ("meta.json", "metrics.json", "table.md")
"""The files of a run the viewer serves as they are (as text)."""


class Refused(RunError):
    """A file the viewer will not open: outside its run, not a regular file, or too large."""


def inside(root: Path, name: str, limit: Limit = META_BYTES) -> Path:
    """``root / name`` resolved, checked to lie in ``root`` (itself resolved) and to be a regular file
    within ``limit``.

    Raises:
        Refused: it does not (the message names the file and why).
    """
    base = root.resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base) or path == base:
        raise Refused(f"{root / name}: outside the run directory (a symlink or a path leading out); refused")
    try:
        info = path.stat()
    except OSError as e:
        raise Refused(f"{root / name}: cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{root / name}: not a regular file; refused")
    if info.st_size > limit.value:
        raise Refused(f"{root / name}: {info.st_size} bytes; {limit.how_to_raise()}")
    return path


def read_text(root: Path, name: str) -> str:
    """A small file of the run (``meta.json``, ``table.md``) as text, checked by :func:`inside`."""
    path = inside(root, name)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise Refused(f"{path}: cannot read: {e.strerror or e}") from None
