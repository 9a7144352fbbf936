"""A byte-offset index of ``items.jsonl``: where each complete line starts, built once per file and
extended when the file grows (a run appending), rebuilt when it was rewritten (a run finishing). The
index holds 8 bytes per record; records are read from disk a page at a time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lingdiag.errors import RunError
from lingdiag.records import ItemRecord
from lingdiag.view.files import ITEMS_BYTES, LINE_BYTES, Refused, inside

_CHUNK = 16 * 2**20


@dataclass(frozen=True, slots=True)
class Offsets:
    """Where each complete line of one version of ``items.jsonl`` starts."""

    path: Path
    starts: np.ndarray
    """Start of each complete line, and the end of the last one (``len(self) + 1`` values)."""
    inode: int
    mtime_ns: int

    def __len__(self) -> int:
        return len(self.starts) - 1

    @property
    def end(self) -> int:
        """The byte after the last complete line."""
        return int(self.starts[-1])


def _line_ends(path: Path, start: int) -> np.ndarray:
    """Offsets just after each line end from ``start`` on."""
    found = []
    with open(path, "rb") as f:
        f.seek(start)
        at = start
        while chunk := f.read(_CHUNK):
            found.append(np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10) + (at + 1))
            at += len(chunk)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


class Index:
    """The offsets of every ``items.jsonl`` read so far, by path, kept while the file is unchanged."""

    def __init__(self) -> None:
        self._known: dict[Path, Offsets] = {}
        self._lock = threading.Lock()

    def of(self, run: Path) -> Offsets:
        """The offsets of ``run``'s ``items.jsonl`` as it is now (no file: no record)."""
        if not (run / "items.jsonl").exists():
            return Offsets(run / "items.jsonl", np.zeros(1, dtype=np.int64), 0, 0)
        path = inside(run, "items.jsonl", ITEMS_BYTES)
        info = path.stat()
        with self._lock:
            old = self._known.get(path)
            if old is not None and (old.inode, old.mtime_ns) == (info.st_ino, info.st_mtime_ns):
                return old
            # Appended to (same file, longer, its indexed part in place): index only what is new.
            grown = old is not None and old.inode == info.st_ino and info.st_size >= old.end
            base = old.starts if grown and old is not None else np.zeros(1, dtype=np.int64)
            ends = _line_ends(path, int(base[-1]))
            new = Offsets(path, np.concatenate([base, ends]).astype(np.int64), info.st_ino, info.st_mtime_ns)
            self._known[path] = new
            return new


def bounded(offsets: Offsets) -> Offsets:
    """``offsets`` once no line of its file, complete or still being written, is longer than one record may be
    (``LINE_BYTES``): the bound every page and the background summary read under, not only the items page's.

    Raises:
        Refused: the first line over it, named with its size.
    """
    sizes = np.diff(offsets.starts)
    if len(sizes) and int(sizes.max()) > LINE_BYTES.value:
        k = int(np.argmax(sizes > LINE_BYTES.value))
        raise Refused(f"{offsets.path}, line {k + 1}: {int(sizes[k])} bytes; {LINE_BYTES.how_to_raise()}")
    try:
        tail = offsets.path.stat().st_size - offsets.end if offsets.inode else 0
    except OSError:
        tail = 0
    if tail > LINE_BYTES.value:
        raise Refused(f"{offsets.path}, line {len(offsets) + 1}: {tail} bytes; {LINE_BYTES.how_to_raise()}")
    return offsets


def _parse(path: Path, number: int, raw: bytes) -> ItemRecord:
    try:
        record = ItemRecord.from_json(raw.decode("utf-8", errors="replace"))
    except (json.JSONDecodeError, TypeError) as e:
        raise RunError(f"{path}, line {number}: not an item record ({e})") from None
    if not isinstance(record.correct, bool | None):
        raise RunError(f"{path}, line {number}, field 'correct': {record.correct!r} is not true, false or null")
    return record


def read(offsets: Offsets, first: int, count: int) -> list[tuple[int, ItemRecord]]:
    """Records ``first`` … ``first + count - 1`` (0-based line numbers) with their line numbers."""
    stop = min(len(offsets), first + count)
    if first >= stop:
        return []
    out = []
    with open(offsets.path, "rb") as f:
        for k in range(first, stop):
            a, b = int(offsets.starts[k]), int(offsets.starts[k + 1])
            if b - a > LINE_BYTES.value:
                raise Refused(f"{offsets.path}, line {k + 1}: {b - a} bytes; {LINE_BYTES.how_to_raise()}")
            f.seek(a)
            out.append((k, _parse(offsets.path, k + 1, f.read(b - a))))
    return out


def lines(offsets: Offsets, start: int = 0) -> Iterator[tuple[int, bytes]]:
    """Every complete line from ``start`` on, raw, streamed from disk."""
    with open(offsets.path, "rb") as f:
        f.seek(int(offsets.starts[start]) if start < len(offsets) else offsets.end)
        for k in range(start, len(offsets)):
            size = int(offsets.starts[k + 1] - offsets.starts[k])
            if size > LINE_BYTES.value:
                raise Refused(f"{offsets.path}, line {k + 1}: {size} bytes; {LINE_BYTES.how_to_raise()}")
            yield k, f.read(size)


def record(offsets: Offsets, k: int, raw: bytes) -> ItemRecord:
    """Line ``k`` (0-based) of ``offsets``' file, parsed."""
    return _parse(offsets.path, k + 1, raw)

