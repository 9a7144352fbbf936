"""``summary.npz``: a run's records as columns, written beside ``items.jsonl`` when the run finishes
(or once on its first read, for a run written before it existed), so that reading a run for numbers
never parses its records again.

It holds, per record in line order, the codes of its condition, item, label and language, its outcome
(right, wrong, not graded), whether the backend failed, and its decision's margin; with them each
condition's metrics, axes and not-interpretable reason as the run's own suite computed them, and the
strings the codes stand for; and, per item (not per record), what a reader sees of it beside its numbers
(``lingdiag.reading.item_table``: its text, gold label, family and human ratings), read only by those who
show it (the study report's Items section), so that they open no record either. It is keyed by what it
summarises and by what computed it:

- **the records**: the SHA-256 of ``items.jsonl``. A summary whose key is not the file's digest now
  (records edited after the run finished, a summary copied in from another run) is not read, and the
  run is read from its records.
- **the code**: a digest of lingdiag's own source files (:func:`producer`), since the metrics are
  computed by the suite's code: another version of lingdiag computes them again, once.
- **the suite**: its name and its suite file's SHA-256.

Hashing ``items.jsonl`` reads all of it, which is what the summary saves. The digest is trusted without
reading the file while the file is the one that was hashed: its device, inode, size, modification time
and **change time** (``st_ctime_ns``) are those recorded beside the digest. No user call can set a file's
change time (``touch``, ``cp -p`` and ``tar x`` restore the modification time only), so a file edited to
the same size with its modification time restored, or replaced by another, is hashed again. A digest
computed in this process (while the records streamed in) is remembered the same way.

The file is ``numpy``'s ``.npz`` read with ``allow_pickle=False``: a summary from someone else's run
directory is data, never code. Every array is checked for its kind and length before it is used; a summary
that is not as written here is not read (the run is read from its records, as without one).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lingdiag.errors import RunError, WriteError
from lingdiag.io.atomic import write_atomic
from lingdiag.io.limits import RUN_FILE_BYTES, open_regular

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from lingdiag.rundir.directory import RunStore

SUMMARY = "summary.npz"
FORMAT = 2
"""The layout below (2: with the per-item table); a summary of another format is read from the records again,
and written anew."""

COLUMNS = {"condition": np.int32, "item": np.int32, "label": np.int32, "language": np.int32, "outcome": np.int8,
           "error": np.bool_, "margin": np.float64}
"""The per-record arrays and their kinds."""
VOCABULARIES = ("items", "labels", "conditions", "languages")
ITEMS = "items"
"""The member holding the per-item table: JSON, column name → one entry per code of the item vocabulary."""


@dataclass(frozen=True, slots=True)
class Stamp:
    """What identifies one file's content without reading it (see the module's text)."""

    device: int
    inode: int
    size: int
    modified_ns: int
    changed_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp | None:
        """``path``'s stamp now; None if it is not there."""
        try:
            s = os.stat(path)
        except OSError:
            return None
        return cls(s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


@dataclass(frozen=True, eq=False)
class StoredSummary:
    """A run's summary as ``summary.npz`` holds it."""

    records_sha256: str
    """The digest of the ``items.jsonl`` it summarises."""
    stamp: Stamp | None
    """``items.jsonl``'s stamp when it was hashed (None: trust nothing without hashing)."""
    producer: str
    suite: tuple[str, str]
    """The suite's name and its suite file's SHA-256 (empty for a built-in suite)."""
    names: dict[str, list[str]]
    """Each vocabulary's strings (:data:`VOCABULARIES`), the codes' meaning."""
    metrics: dict[str, dict[str, Any]]
    """Condition → its metrics, in the run's condition order."""
    axes: dict[str, dict[str, str]]
    flags: dict[str, str]
    """Condition → why its answers are not interpretable."""
    columns: dict[str, NDArray[Any]]
    """The per-record arrays (:data:`COLUMNS`)."""
    items: dict[str, list[Any]] | None = None
    """The per-item table (column → one entry per item code; ``lingdiag.reading.item_table``); None where it
    was not read (:func:`read_summary` leaves it in the file: see :func:`read_items`)."""

    def header(self) -> dict[str, Any]:
        """Everything but the per-record arrays, as the file's JSON header holds it."""
        return {"format": FORMAT, "records_sha256": self.records_sha256,
                "stamp": None if self.stamp is None else [self.stamp.device, self.stamp.inode, self.stamp.size,
                                                          self.stamp.modified_ns, self.stamp.changed_ns],
                "producer": self.producer, "suite": list(self.suite), "names": self.names, "metrics": self.metrics,
                "axes": self.axes, "flags": self.flags}


@cache
def producer() -> str:
    """A digest of lingdiag's own source files: what computed a summary's metrics."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


_HASHED: dict[tuple[str, Stamp], str] = {}
"""Digests computed in this process, by the file's path and its stamp then."""


def remember(path: Path, stamp: Stamp, sha256: str) -> None:
    """Record that ``path`` with ``stamp`` hashed to ``sha256`` (a reader that streamed it whole)."""
    if Stamp.of(path) == stamp:  # unchanged while it was read
        _HASHED[(str(Path(path).absolute()), stamp)] = sha256


def records_digest(store: RunStore) -> str | None:
    """The SHA-256 of ``store``'s ``items.jsonl``: trusted from its summary or from this process while the
    file is the one hashed, else computed (reading the file once). None if there is no such file.
    """
    path = store.items_path
    stamp = Stamp.of(path)
    if stamp is None:
        return None
    key = (str(path.absolute()), stamp)
    if key in _HASHED:
        return _HASHED[key]
    stored = read_header(store)
    if stored is not None and stored.get("stamp") == [stamp.device, stamp.inode, stamp.size, stamp.modified_ns,
                                                      stamp.changed_ns]:
        return str(stored["records_sha256"])
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        raise RunError(f"cannot read {path}: {e.strerror or e}") from None
    digest = h.hexdigest()
    remember(path, stamp, digest)
    return digest


def summarised(store: RunStore) -> bool:
    """Whether ``store`` has a summary this code wrote of its ``items.jsonl`` as it is now (by the stamp:
    nothing is hashed).
    """
    header = read_header(store)
    return header is not None and current(store, header)


def current(store: RunStore, header: dict[str, Any]) -> bool:
    """Whether a summary with ``header`` was written by this code of ``store``'s ``items.jsonl`` as it is now
    (its stamp: nothing is hashed; a file edited, replaced or copied in has another).
    """
    stamp = Stamp.of(store.items_path)
    return (stamp is not None and header.get("producer") == producer()
            and header.get("stamp") == [stamp.device, stamp.inode, stamp.size, stamp.modified_ns, stamp.changed_ns])


def summarised_counts(store: RunStore) -> tuple[int, int] | None:
    """(answered, failed) records of a finished run, from its summary while that summarises ``items.jsonl``
    as it is now (:func:`summarised`); None otherwise.
    """
    if not summarised(store):
        return None
    with _archive(store) as archive:
        try:
            error = np.load(archive.open("error.npy"), allow_pickle=False) if archive is not None else None
        except (KeyError, ValueError, OSError, zipfile.BadZipFile):
            return None
    if error is None or error.dtype != np.bool_ or error.ndim != 1:
        return None
    failed = int(error.sum())
    return len(error) - failed, failed


@contextmanager
def _archive(store: RunStore) -> Iterator[zipfile.ZipFile | None]:
    """``summary.npz`` open as an archive (None: none, or torn or foreign: the records are read instead). Only
    the members asked for are read: the per-item table stays on disk for readers of numbers.
    """
    path = store.root / SUMMARY
    with ExitStack() as stack:
        archive = None
        if path.exists() or path.is_symlink():
            try:
                archive = zipfile.ZipFile(stack.enter_context(open_regular(path, RUN_FILE_BYTES)))
            except (RunError, zipfile.BadZipFile, OSError):
                archive = None
        yield archive


def _header(archive: zipfile.ZipFile) -> dict[str, Any] | None:
    try:
        raw = np.load(archive.open("header.npy"), allow_pickle=False)
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (KeyError, ValueError, OSError, UnicodeDecodeError, zipfile.BadZipFile):
        return None
    return header if isinstance(header, dict) and header.get("format") == FORMAT else None


def read_header(store: RunStore) -> dict[str, Any] | None:
    """``summary.npz``'s header (its key and small parts), or None where there is none readable."""
    with _archive(store) as archive:
        return None if archive is None else _header(archive)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def read_summary(store: RunStore) -> StoredSummary | None:
    """``store``'s summary as written, or None where there is none, or one not as written here (torn,
    foreign, of another format): such a run is read from its records.
    """
    with _archive(store) as archive:
        return None if archive is None else _summary(archive)


def _summary(archive: zipfile.ZipFile) -> StoredSummary | None:
    header = _header(archive)
    if header is None:
        return None
    try:
        columns = {name: np.load(archive.open(f"{name}.npy"), allow_pickle=False) for name in COLUMNS}
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        return None
    n = len(columns["item"])
    names = header.get("names")
    if (any(c.dtype != kind or c.ndim != 1 or len(c) != n for c, kind in zip(columns.values(), COLUMNS.values(),
                                                                              strict=True))
            or not isinstance(names, dict) or not all(_strings(names.get(v)) for v in VOCABULARIES)):
        return None
    for column, vocabulary in (("condition", "conditions"), ("item", "items"), ("label", "labels"),
                               ("language", "languages")):
        codes = columns[column]
        if n and (codes.min() < -1 or codes.max() >= len(names[vocabulary])):
            return None
    stamp = header.get("stamp")
    metrics, axes, flags, suite = (header.get(k) for k in ("metrics", "axes", "flags", "suite"))
    if (not isinstance(metrics, dict) or not isinstance(axes, dict) or not isinstance(flags, dict)
            or not isinstance(header.get("records_sha256"), str) or not isinstance(suite, list) or not _strings(suite)
            or len(suite) != 2):
        return None
    return StoredSummary(header["records_sha256"],
                         Stamp(*stamp) if isinstance(stamp, list) and len(stamp) == 5
                         and all(isinstance(v, int) for v in stamp) else None,
                         str(header.get("producer")), (suite[0], suite[1]), names, metrics, axes, flags, columns)


def read_items(store: RunStore) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    """``store``'s summary's header and per-item table, read together from one file (so the table is the one
    that header keys), or None where there is none as written here (one list per column, one entry per item
    of the header's item vocabulary). Whether it summarises ``items.jsonl`` as it is now is the caller's to
    ask of the header (:func:`current`).
    """
    with _archive(store) as archive:
        return None if archive is None else _items(archive)


def _items(archive: zipfile.ZipFile) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    header = _header(archive)
    if header is None:
        return None
    try:
        table = json.loads(np.load(archive.open(f"{ITEMS}.npy"), allow_pickle=False).tobytes().decode("utf-8"))
    except (KeyError, ValueError, OSError, UnicodeDecodeError, zipfile.BadZipFile):
        return None
    names = header.get("names")
    items = names.get("items") if isinstance(names, dict) else None
    if (not isinstance(items, list) or not _strings(items) or not isinstance(table, dict)
            or not all(isinstance(v, list) and len(v) == len(items) for v in table.values())):
        return None
    return header, table


def write_summary(store: RunStore, summary: StoredSummary) -> bool:
    """Write ``summary.npz`` atomically; False (nothing written) where the directory cannot be written
    (a run directory read from read-only storage keeps its summary in memory).
    """
    if summary.items is None:
        raise ValueError("a summary is written with its per-item table")
    buffer = io.BytesIO()
    # Not sort_keys: the conditions stay in the run's order.
    header = json.dumps(summary.header(), ensure_ascii=True, allow_nan=True).encode()
    table = json.dumps(summary.items, ensure_ascii=True, allow_nan=True).encode()
    arrays = {"header": np.frombuffer(header, np.uint8), ITEMS: np.frombuffer(table, np.uint8)} | {
        name: np.asarray(summary.columns[name], kind) for name, kind in COLUMNS.items()}
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    try:
        write_atomic(store.root / SUMMARY, buffer.getvalue())
    except WriteError:
        return False
    return True
