"""One run directory: its lock, ``items.jsonl`` appended chunk by chunk, and the files written
at its end.

``items.jsonl`` is appended chunk by chunk and fsynced, so a run killed at any point
loses at most the chunk in flight. On resume, a torn last line and records that carry a
backend error are dropped (those items run again), and the file is rewritten without
duplicates. When a run finishes, the records are rewritten in canonical order so that
the same configuration gives a byte-identical file however often it was interrupted.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from lingdiag.config import transport_of
from lingdiag.errors import RunError
from lingdiag.io.atomic import SURROGATES, is_temporary, make_dir, write_atomic
from lingdiag.io.content import text_id
from lingdiag.io.limits import regular_lines
from lingdiag.records import ItemRecord, dumps
from lingdiag.rundir.inputs import Inputs, drift, recorded_path
from lingdiag.rundir.meta import META, ModelIdentity, RunMeta
from lingdiag.rundir.parts import SUITE_COPY, SuiteSource


class Hasher(Protocol):
    """What :meth:`RunStore.records` feeds the bytes it reads (``hashlib.sha256()``)."""

    def update(self, data: bytes, /) -> None:
        """Take ``data`` into the digest."""


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """A read-only or full run directory is a one-line ``RunError``, not a traceback."""
    try:
        yield
    except OSError as e:
        raise RunError(f"cannot write {e.filename or path}: {e.strerror or e}") from None


def held_locks() -> frozenset[str] | None:
    """The files whose ``flock`` a live process holds now, as ``/proc/locks`` names them (``MAJ:MIN:INODE``,
    in hex and decimal as the kernel writes them); None where the system has no ``/proc/locks``. A reader
    asking about many runs (the viewer's runs list) reads the table once.
    """
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    return frozenset(line.split()[-3] for line in table.splitlines() if " FLOCK " in line and len(line.split()) >= 3)


def lock_held(run_dir: Path, held: frozenset[str] | None = None) -> bool:
    """Whether a live process holds ``run_dir``'s lock (``RunStore.lock``) now.

    Read from ``/proc/locks`` where the system has it (or from ``held``, :func:`held_locks` read once for
    many runs), so that asking never takes a lock itself: a reader probing with ``flock`` at the moment a run
    starts would make that run refuse to start. Elsewhere, a shared lock is tried and released at once.
    """
    lock = Path(run_dir) / ".lock"
    try:
        info = os.stat(lock)
    except OSError:
        return False
    table = held if held is not None else held_locks()
    if table is not None:
        return f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}" in table
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # releases the shared lock just taken, if it was
    return False


_REFUSALS = {"config": "holds a run with a different configuration (differs in: {})",
             "data": "was run on other data: {} changed since (SHA-256)",
             "suite_file": "was run from another version of suite file {} (SHA-256 changed)"}
"""Resume's refusal of each kind of change (``Change.kind``), after the run directory's name."""


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.items_path = self.root / "items.jsonl"
        self.meta_path = self.root / META

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory for one process: a second one on the same ``--out`` is refused
        (``RunError`` naming the holder's pid) instead of interleaving records and temp files.

        An OS lock (``flock`` on ``.lock``), so the kernel releases it when the holder exits
        or is killed; the pid written into the file is only for the message.
        """
        with _writing(self.root):
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                raise RunError(f"run directory {self.root} is in use by pid {holder}; wait for it to finish "
                               "or use another --out directory") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def running(self) -> bool:
        """Whether a live process holds the directory's lock (a run still writing to it)."""
        return lock_held(self.root)

    def discard_if_empty(self) -> None:
        """Remove the directory if it holds only what a run writes before its first record
        (a run that failed to start leaves no empty run behind to be mistaken for one).
        """
        ours = {".lock", META, "items.jsonl"}
        if not self.root.is_dir() or self.load_records():
            return
        names = {p.name for p in self.root.iterdir()}
        if {n for n in names - ours if not is_temporary(n)}:
            return
        for name in names:
            (self.root / name).unlink(missing_ok=True)
        self.root.rmdir()

    def load_records(self) -> list[ItemRecord]:
        """All complete records; a torn last line (a killed write) is ignored."""
        return list(self.records())

    def records(self, digest: Hasher | None = None) -> Iterator[ItemRecord]:
        """The complete records one at a time, the file never held whole (see :meth:`load_records`); each
        line's bytes fed to ``digest`` as it is read (a reader hashing the file in the same pass).

        A line that is not a record (not UTF-8, not JSON, not an item record) is refused, naming
        the line, unless it is the last: a write killed mid-line, even mid-character, leaves one. A
        line without its newline ends the read: it is the end of what is written now, and a run still
        writing may append the rest of it while this reads.
        """
        if not self.items_path.exists() and not self.items_path.is_symlink():
            return
        bad: RunError | None = None
        start = 0
        for n, raw in enumerate(regular_lines(self.items_path), 1):
            if bad is not None:  # a bad line that is not the last
                raise bad
            if digest is not None:
                digest.update(raw)
            try:
                record = ItemRecord.from_json(raw.removesuffix(b"\n").decode("utf-8"))
            except UnicodeDecodeError as e:
                bad = RunError(f"{self.items_path}, line {n}: not UTF-8 text ({e.reason} at byte {start + e.start})")
            except (ValueError, TypeError) as e:  # a JSONDecodeError is a ValueError
                bad = RunError(f"{self.items_path}, line {n}: not an item record ({' '.join(str(e).split())})")
            else:
                if not isinstance(record.correct, bool | None):
                    raise RunError(f"{self.items_path}, line {n}, field 'correct': {record.correct!r} is not "
                                   "true, false or null")
                yield record
            if not raw.endswith(b"\n"):
                return
            start += len(raw)

    def prepare_resume(self, inputs: Inputs) -> tuple[set[tuple[str, str]], dict[str, float], list[dict[str, Any]]]:
        """Check the directory holds a run of ``inputs`` (or none); return the (condition, item) keys
        done, the seconds the earlier sessions spent per condition and their transport settings
        (``meta.json``'s ``attempts``; a run written before they were recorded: its configuration's).

        Errored records are dropped so those items run again; the file is rewritten with one record
        per key. What may not differ from the earlier run is what makes a run stale
        (``lingdiag.rundir.inputs.drift``): its configuration (but its transport settings), what it read
        of the data and the suite file, as a changed file is a changed configuration.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        timings: dict[str, float] = {}
        attempts: list[dict[str, Any]] = []
        if self.meta_path.exists():
            meta = self.read_meta()
            timings = dict(meta.timings or {})
            attempts = [dict(a) for a in meta.attempts] if meta.attempts is not None else [
                transport_of(meta.config)]
            changes, _ = drift(meta, inputs)
            for change in changes:
                raise RunError(f"{self.root} {_REFUSALS[change.kind].format(change.what)}; use another --out directory")
        kept: dict[tuple[str, str], ItemRecord] = {}
        for r in self.load_records():
            if r.error is None:
                kept[(r.condition, r.item_id)] = r
        write_atomic(self.items_path, "".join(r.to_json() + "\n" for r in kept.values()))
        return set(kept), timings, attempts

    def append(self, records: Iterable[ItemRecord]) -> None:
        """Append records durably."""
        text = "".join(r.to_json() + "\n" for r in records)
        # A lone surrogate (model or dataset text read from JSON) is written as U+FFFD, as by lingdiag.io.atomic.
        with _writing(self.items_path), open(self.items_path, "a", encoding="utf-8", errors=SURROGATES) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def finalize(self, order: Sequence[tuple[str, str]]) -> list[ItemRecord]:
        """Rewrite ``items.jsonl`` in canonical ``order``, keeping the last record per key."""
        latest = {(r.condition, r.item_id): r for r in self.load_records()}
        records = [latest[k] for k in order if k in latest]
        write_atomic(self.items_path, "".join(r.to_json() + "\n" for r in records))
        return records

    def write_json(self, name: str, data: Any) -> None:
        """Write ``name`` (``metrics.json``) atomically; ``meta.json`` goes through :meth:`write_meta`."""
        if name == META:
            raise ValueError("meta.json is written by RunStore.write_meta only")
        _write_json(self.root / name, data)

    def read_meta(self) -> RunMeta:
        """``meta.json`` as a :class:`RunMeta`."""
        if not self.meta_path.exists() and not self.meta_path.is_symlink():
            raise RunError(f"{self.meta_path} does not exist; is {self.root} a lingdiag run directory?")
        return RunMeta.read(self.meta_path)

    def write_meta(self, meta: RunMeta) -> None:
        """Write ``meta.json`` atomically."""
        _write_json(self.meta_path, meta.to_json())

    def write_text(self, name: str, text: str) -> None:
        """Write a text file (``table.md``) atomically."""
        write_atomic(self.root / name, text)


def write_imported(root: Path, *, suite: str, model: str, dataset: str, records: Sequence[ItemRecord],
                   provenance: Mapping[str, Any], source: SuiteSource | None = None) -> None:
    """A run directory for answers computed elsewhere (``lingdiag score … --out``), readable by
    ``lingdiag report`` and the cross-run analyses like any run's.

    Args:
        root: The directory to create; an existing run there is refused.
        suite: The suite the records belong to.
        model: The name the report shows (e.g. the source file's model).
        dataset: The dataset the answers were matched to.
        records: The imported records.
        provenance: What was imported and how (file, SHA-256, columns, rules), kept in ``meta.json``.
        source: The suite file the suite was read from, if any: kept beside the records with its
            SHA-256 in ``meta.json``, as a run keeps it, for reports to read them with.
    """
    store = RunStore(root)
    if store.meta_path.exists():
        raise RunError(f"{root} already holds a run; use another --out directory")
    make_dir(store.root)
    write_atomic(store.items_path, "".join(r.to_json() + "\n" for r in records))
    if source is not None:
        store.write_text(SUITE_COPY, source.text)
    # The suite file as a run records it (``rundir.inputs``): where it lies, resolved now, and what was read of it.
    suite_file = None if source is None else {
        "path": recorded_path(source.path, store.root), "sha256": source.sha256,
        "content": text_id(source.text.encode("utf-8"), Path(source.path).suffix)}
    store.write_meta(RunMeta(config={"suite": source.path if source else suite, "model": model, "dataset": dataset},
                             identity=ModelIdentity({"model": model, "backend": "imported"}),
                             suite_file=suite_file, imported=dict(provenance), origin=str(store.root.resolve())))
