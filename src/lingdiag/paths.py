"""Where lingdiag keeps files on disk, and file checksums."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


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
