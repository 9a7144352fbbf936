"""Where lingdiag keeps files on disk, and file checksums."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from lingdiag.errors import WriteError
from lingdiag.io.atomic import make_dir, write_atomic


def path_safe(text: str) -> str:
    """``text`` with every character but letters, digits, ``-``, ``.`` and ``_`` replaced by ``_``:
    a name a run's or study's directory can take.
    """
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in text)


_PART = r"[^\s/\\'\"`<>|*()\[\]{},;]+"
_ABSOLUTE = re.compile(rf"(?:(?<=file://)|(?<![\w.:/\\+=~-]))(?:/{_PART}){{2,}}/?|\b[A-Za-z]:\\(?:{_PART}\\?)+")
"""An absolute path of two components or more (``/home/u/x``, ``C:\\Users\\u``), never a fraction (``1/2``), a
condition's name (``zero-shot/cot``), a URL's path (``http://host/v1/x``) or a closing tag."""


def portable(text: str, within: Iterable[Path] = ()) -> str:
    """``text`` with no path of this machine in it, for an output that is shared (a report's Markdown, LaTeX or
    HTML): a path inside one of ``within`` (the study or run directory) as relative to it, any other absolute
    path as ``…/`` and its last component (``…/models--org--m``): which file, not whose disk.
    """
    for root in sorted({str(r) for p in within for r in (Path(p), Path(p).resolve())}, key=len, reverse=True):
        if len(Path(root).parts) > 1:
            text = re.sub(re.escape(root) + r"(?:/|(?=[^\w.-])|$)", "", text)
    return _ABSOLUTE.sub(lambda m: "…/" + re.split(r"[/\\]", m.group().rstrip("/\\"))[-1], text)


def cache_dir() -> Path:
    """``$LINGDIAG_CACHE``, default ``~/.cache/lingdiag`` (models, datasets, responses)."""
    return Path(os.environ.get("LINGDIAG_CACHE") or Path.home() / ".cache" / "lingdiag")


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_weights(path: Path) -> str:
    """SHA-256 of a weights file, remembered in the cache by its path, size and modification time.

    A 70B checkpoint is ~140 GB: hashing it at every backend construction (each run, each shard
    job) read all of it before any work started. A file rewritten in place changes its size or
    its nanosecond mtime, and is hashed again.
    """
    resolved = path.resolve()
    stat = resolved.stat()
    stamp = {"path": str(resolved), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    memo = cache_dir() / "hashes" / f"{hashlib.sha256(str(resolved).encode()).hexdigest()[:32]}.json"
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
        if {k: known.get(k) for k in stamp} == stamp and isinstance(known.get("sha256"), str):
            return str(known["sha256"])
    except (OSError, ValueError):
        pass  # absent or unreadable: hash the file
    digest = sha256_file(resolved)
    # Atomic: shard jobs hashing the same file at once never read half a memo. The memo only
    # saves time, so a cache that cannot be written (read-only, full) costs a re-hash next time.
    try:
        make_dir(memo.parent)
        write_atomic(memo, json.dumps(stamp | {"sha256": digest}))
    except WriteError:
        pass
    return digest
