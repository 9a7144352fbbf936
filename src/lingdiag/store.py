"""The run directory: ``meta.json``, ``items.jsonl``, ``metrics.json``, ``table.md``, and
loading run directories back as ``ResultRow``s (metrics recomputed from the records).

``items.jsonl`` is appended chunk by chunk and fsynced, so a run killed at any point
loses at most the chunk in flight. On resume, a torn last line and records that carry a
backend error are dropped (those items run again), and the file is rewritten without
duplicates. When a run finishes, the records are rewritten in canonical order so that
the same configuration gives a byte-identical file however often it was interrupted.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingdiag.errors import RunError
from lingdiag.io.atomic import SURROGATES, is_temporary, make_dir, write_atomic
from lingdiag.records import UNPARSED, ItemRecord, ResultRow, dumps
from lingdiag.suite import Excluded, suite_of_run

SCHEMA_VERSION = 1


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """A read-only or full run directory is a one-line ``RunError``, not a traceback."""
    try:
        yield
    except OSError as e:
        raise RunError(f"cannot write {e.filename or path}: {e.strerror or e}") from None


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str] = ()) -> list[str]:
    """The config fields (as in ``meta.json``) that differ between two runs, sorted; ``ignore`` excepted."""
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.items_path = self.root / "items.jsonl"

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

    def discard_if_empty(self) -> None:
        """Remove the directory if it holds only what a run writes before its first record
        (a run that failed to start leaves no empty run behind to be mistaken for one).
        """
        ours = {".lock", "meta.json", "items.jsonl"}
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
        if not self.items_path.exists():
            return []
        records = []
        # Split on "\n" only: model text may hold U+2028 or U+0085, which JSON leaves
        # unescaped and str.splitlines() would treat as line ends.
        lines = self.items_path.read_text(encoding="utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        for n, line in enumerate(lines, 1):
            try:
                record = ItemRecord.from_json(line)
            except (json.JSONDecodeError, TypeError) as e:
                if n == len(lines):
                    break
                raise RunError(f"{self.items_path}, line {n}: not an item record ({e})") from e
            if not isinstance(record.correct, bool | None):
                raise RunError(f"{self.items_path}, line {n}, field 'correct': {record.correct!r} is not "
                               "true, false or null")
            records.append(record)
        return records

    def _meta(self) -> dict[str, Any]:
        """``meta.json``; damaged or empty is a ``RunError`` naming the line."""
        path = self.root / "meta.json"
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            where = f"line {e.lineno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise RunError(f"{path}, {where}: not a run's meta.json (damaged or empty)") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise RunError(f"{path}: not a run's meta.json (no config object)")
        return meta

    def prepare_resume(self, config: dict[str, Any], ignore: Sequence[str] = (),
                       dataset: Mapping[str, str] | None = None, suite_file: Mapping[str, str] | None = None,
                       ) -> tuple[set[tuple[str, str]], dict[str, float]]:
        """Check the directory matches ``config``; return the (condition, item) keys done
        and the seconds the earlier sessions spent per condition.

        Errored records are dropped so those items run again; the file is rewritten with
        one record per key. Fields named in ``ignore`` may differ from the earlier run's; the
        dataset files' checksums (``dataset``) may not, nor the suite file's (``suite_file``:
        its path and SHA-256), as a changed file is a changed configuration.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        meta_path = self.root / "meta.json"
        timings: dict[str, float] = {}
        if meta_path.exists():
            meta = self._meta()
            timings = meta.get("timings", {})
            changed = config_changes(meta.get("config", {}), config, ignore)
            if changed:
                raise RunError(f"{self.root} holds a run with a different configuration "
                               f"(differs in: {', '.join(changed)}); use another --out directory")
            before = meta.get("dataset") or {}
            # An empty checksum (runs from before user files were hashed) cannot be compared.
            changed = sorted(k for k in set(before) | set(dataset or {})
                             if dataset is not None and before.get(k) != dataset.get(k) and before.get(k) != "")
            if changed:
                raise RunError(f"{self.root} was run on other data: {', '.join(changed)} changed since "
                               "(SHA-256); use another --out directory")
            old = (meta.get("suite_file") or {}).get("sha256")
            if old != (suite_file or {}).get("sha256"):
                raise RunError(f"{self.root} was run from another version of suite file "
                               f"{(suite_file or meta.get('suite_file') or {}).get('path')} (SHA-256 changed); "
                               "use another --out directory")
        kept: dict[tuple[str, str], ItemRecord] = {}
        for r in self.load_records():
            if r.error is None:
                kept[(r.condition, r.item_id)] = r
        write_atomic(self.items_path, "".join(r.to_json() + "\n" for r in kept.values()))
        return set(kept), timings

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
        """Write ``name`` (e.g. ``meta.json``) atomically."""
        write_atomic(self.root / name, dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    def read_json(self, name: str) -> Any:
        """Read ``name`` from the run directory."""
        path = self.root / name
        if not path.exists():
            raise RunError(f"{path} does not exist; is {self.root} a lingdiag run directory?")
        if name == "meta.json":
            return self._meta()
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise RunError(f"{path}: not JSON ({e})") from None

    def read_meta(self) -> RunMeta:
        """``meta.json`` as a :class:`RunMeta`."""
        return RunMeta.from_json(self.read_json("meta.json"), self.root / "meta.json")

    def write_text(self, name: str, text: str) -> None:
        """Write a text file (``table.md``) atomically."""
        write_atomic(self.root / name, text)


def write_imported(root: Path, *, suite: str, model: str, dataset: str, records: Sequence[ItemRecord],
                   provenance: Mapping[str, Any]) -> None:
    """A run directory for answers computed elsewhere (``lingdiag score … --out``), readable by
    ``lingdiag report`` and the cross-run analyses like any run's.

    Args:
        root: The directory to create; an existing run there is refused.
        suite: The suite the records belong to.
        model: The name the report shows (e.g. the source file's model).
        dataset: The dataset the answers were matched to.
        records: The imported records.
        provenance: What was imported and how (file, SHA-256, columns, rules), kept in ``meta.json``.
    """
    store = RunStore(root)
    if (store.root / "meta.json").exists():
        raise RunError(f"{root} already holds a run; use another --out directory")
    make_dir(store.root)
    write_atomic(store.items_path, "".join(r.to_json() + "\n" for r in records))
    store.write_json("meta.json", {"config": {"suite": suite, "model": model, "dataset": dataset},
                                   "model": {"model": model, "backend": "imported"}, "imported": dict(provenance)})


@dataclass(frozen=True, slots=True)
class RunMeta:
    """A run's ``meta.json``, read once (:meth:`RunStore.read_meta`): the fields analyses, reports
    and merges read, typed, instead of string keys at every use.
    """

    suite: str
    """``config.suite``."""
    model: str
    """The model's display name: what the backend called it, else the configured spec."""
    dataset: str
    """The dataset spec of the run (``config.dataset``: ``builtin``, ``official`` or a path)."""
    config: Mapping[str, Any]
    """The recorded run configuration."""
    model_info: Mapping[str, Any] = field(default_factory=dict)
    """What the backend recorded about the model (``backend``, ``weights_sha256``, ``n_params``...)."""
    checksums: Mapping[str, str] = field(default_factory=dict)
    """The dataset files' checksums (``meta.json``'s ``dataset``)."""
    versions: Mapping[str, str] = field(default_factory=dict)
    seed: int | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Condition → why it was not run."""
    timings: Mapping[str, float] = field(default_factory=dict)
    usage: Mapping[str, Any] | None = None
    """Tokens and requests a metered backend counted; None where it counted none."""
    excluded: tuple[Excluded, ...] = ()
    """Items of the data left out as not interpretable (``meta.json``'s ``excluded``)."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The whole ``meta.json``, for fields this class does not name (``shards``, ...)."""

    @property
    def n_params(self) -> float | None:
        """The parameter count the backend recorded, if any."""
        value = self.model_info.get("n_params")
        try:
            return float(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None

    @classmethod
    def from_json(cls, meta: Mapping[str, Any], path: Path) -> RunMeta:
        """The typed view of a parsed ``meta.json`` at ``path`` (named in a one-line error)."""
        config = meta["config"]
        if not isinstance(config.get("suite"), str):
            raise RunError(f"{path}, field 'config.suite': missing or not a string")
        model = meta.get("model") or {}
        return cls(suite=config["suite"], model=str(model.get("model", config.get("model", ""))),
                   dataset=str(config.get("dataset", "")), config=config, model_info=model,
                   checksums=meta.get("dataset") or {}, versions=meta.get("versions") or {}, seed=meta.get("seed"),
                   skipped=meta.get("skipped") or {}, timings=meta.get("timings") or {}, usage=meta.get("usage"),
                   excluded=tuple(Excluded(str(e.get("item_id", "")), str(e.get("reason", "")))
                                  for e in meta.get("excluded") or () if isinstance(e, Mapping)),
                   raw=meta)


@dataclass(frozen=True)
class LoadedRun:
    """A run directory read back for reports and analyses (never a model call)."""

    path: Path
    suite: str
    model: str
    meta: RunMeta
    rows: list[ResultRow]
    """One row per condition, metrics recomputed from ``items.jsonl`` with the suite's function."""
    item_ids: frozenset[str] = frozenset()
    """The items the run's records cover (reports flag runs over different items)."""
    records: list[ItemRecord] = field(default_factory=list)
    """Every record, as read once for the metrics (the report's item browser shows them)."""


def load_run(run_dir: Path) -> LoadedRun:
    """Read ``run_dir`` and recompute every condition's metrics from its records."""
    store = RunStore(run_dir)
    meta = store.read_meta()
    suite = suite_of_run(meta.raw, run_dir)
    model = meta.model
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for n, r in enumerate(store.load_records(), 1):
        if suite.labels and r.label not in (*suite.labels, UNPARSED):
            raise RunError(f"{store.items_path}, line {n}, field 'label': {r.label!r} is not a {suite.name} label "
                           f"({', '.join(suite.labels)} or {UNPARSED})")
        by_condition[r.condition].append(r)
    rows = [ResultRow(model, c, dict(rs[0].axes), suite.condition_metrics(rs), str(run_dir), meta.dataset,
                      meta.n_params)
            for c, rs in by_condition.items()]
    records = [r for rs in by_condition.values() for r in rs]
    return LoadedRun(Path(run_dir), suite.name, model, meta, rows, frozenset(r.item_id for r in records), records)
