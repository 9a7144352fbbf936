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
import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lingdiag.config import RunConfig
from lingdiag.errors import RunError, one_line
from lingdiag.io.atomic import SURROGATES, is_temporary, make_dir, write_atomic
from lingdiag.io.paths import sha256_file
from lingdiag.records import UNFINISHED, UNPARSED, ItemRecord, ResultRow, dumps
from lingdiag.suite import SUITE_COPY, SUITES, Excluded, Suite, SuiteSource

SCHEMA_VERSION = 1
META = "meta.json"


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


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
        timings: dict[str, float] = {}
        if self.meta_path.exists():
            meta = self.read_meta()
            timings = dict(meta.timings or {})
            changed = config_changes(meta.config, config, ignore)
            if changed:
                raise RunError(f"{self.root} holds a run with a different configuration "
                               f"(differs in: {', '.join(changed)}); use another --out directory")
            before = meta.checksums or {}
            # An empty checksum (runs from before user files were hashed) cannot be compared.
            changed = sorted(k for k in set(before) | set(dataset or {})
                             if dataset is not None and before.get(k) != dataset.get(k) and before.get(k) != "")
            if changed:
                raise RunError(f"{self.root} was run on other data: {', '.join(changed)} changed since "
                               "(SHA-256); use another --out directory")
            old = (meta.suite_file or {}).get("sha256")
            if old != (suite_file or {}).get("sha256"):
                raise RunError(f"{self.root} was run from another version of suite file "
                               f"{(suite_file or meta.suite_file or {}).get('path')} (SHA-256 changed); "
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
        """Write ``name`` (``metrics.json``) atomically; ``meta.json`` goes through :meth:`write_meta`."""
        if name == META:
            raise ValueError("meta.json is written by RunStore.write_meta only")
        _write_json(self.root / name, data)

    def read_meta(self) -> RunMeta:
        """``meta.json`` as a :class:`RunMeta`."""
        if not self.meta_path.exists():
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
    store.write_meta(RunMeta(config={"suite": source.path if source else suite, "model": model, "dataset": dataset},
                             identity=ModelIdentity({"model": model, "backend": "imported"}),
                             suite_file={"path": source.path, "sha256": source.sha256} if source else None,
                             imported=dict(provenance)))


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """``meta.json``'s ``model``: the backend's identity (the cache key's model part), as recorded.

    The entries are the backend's own (``backend``, ``model``, ``weights_sha256``, device and
    adapter settings...), so they are kept whole; the ones every reader needs are typed here.
    """

    fields: Mapping[str, Any]

    @property
    def backend(self) -> str:
        """The backend's name (``hf``, ``openai``, ``mock``, ``imported``...)."""
        return str(self.fields.get("backend", ""))

    @property
    def name(self) -> str | None:
        """The model's display name as the backend gave it; None where it gave none."""
        value = self.fields.get("model")
        return None if value is None else str(value)

    @property
    def weights_sha256(self) -> str:
        """The weights' SHA-256 (empty where the backend cannot see them)."""
        return str(self.fields.get("weights_sha256", ""))

    @property
    def n_params(self) -> float | None:
        """The parameter count the backend recorded, if any."""
        value = self.fields.get("n_params")
        try:
            return float(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None


_JSON_TYPES: dict[str, tuple[type, str]] = {
    "schema_version": (int, "an integer"), "config": (dict, "an object"), "model": (dict, "an object"),
    "dataset": (dict, "an object"), "versions": (dict, "an object"), "lock": (dict, "an object"),
    "seed": (int, "an integer"), "timings": (dict, "an object"), "skipped": (dict, "an object"),
    "scoring_policies": (dict, "an object"), "suite_file": (dict, "an object"), "thinking": (dict, "an object"),
    "after_thinking": (dict, "an object"),
    "precision": (dict, "an object"), "excluded": (list, "a list"), "usage": (dict, "an object"),
    "shards": (list, "a list"), "imported": (dict, "an object"),
}
"""Every key ``meta.json`` may hold, with its JSON type."""
_REQUIRED = ("config", "model")
"""What every run directory's ``meta.json`` holds (an imported run's holds little more)."""


@dataclass(frozen=True, slots=True)
class RunMeta:
    """A run's ``meta.json``: the only writer (:meth:`to_json`, through :meth:`RunStore.write_meta`)
    and the only reader (:meth:`read`) of it, so that every key is named once, here.

    Optional parts are None where the file does not hold them (an imported run holds only
    ``config``, ``model`` and ``imported``), so a file read and written back is unchanged.
    """

    config: Mapping[str, Any]
    """The recorded run configuration (``RunConfig.recorded()``), compared field by field on resume;
    :attr:`run_config` is its typed form."""
    identity: ModelIdentity
    """``model``: what the backend recorded about the model."""
    schema_version: int | None = None
    checksums: Mapping[str, str] | None = None
    """``dataset``: each data file's SHA-256."""
    versions: Mapping[str, str] | None = None
    """Package versions (python, lingdiag, torch...)."""
    lock: Mapping[str, Any] | None = None
    """The installed environment beside the lock (``lingdiag.models.environment``)."""
    seed: int | None = None
    timings: Mapping[str, float] | None = None
    """Condition → seconds spent, summed over resumed sessions (and over shards)."""
    skipped: Mapping[str, str] | None = None
    """Condition → why it was not run."""
    scoring_policies: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    """Condition → the scoring policies its requests carry, where not only the default."""
    suite_file: Mapping[str, str] | None = None
    """The suite file a run was read from: ``path`` and ``sha256``."""
    thinking: Mapping[str, Any] | None = None
    """Condition → the thinking setting it ran under (``--thinking``), where the axis was given."""
    after_thinking: Mapping[str, Any] | None = None
    """Condition → the generation run whose thinking it replays (``--after-thinking``: ``run``,
    ``condition``, ``setting``) and the items not scored, by reason; None without replays."""
    precision: Mapping[str, Any] | None = None
    """A reduced-precision run's dtype, the per-token noise bound its fragile decisions are marked
    against and whether they were re-scored (``rescore_fragile``); None in float32."""
    excluded: tuple[Excluded, ...] | None = None
    """Items of the data left out as not interpretable (identical or empty minimal pairs); None
    where the data has none."""
    usage: Mapping[str, int] | None = None
    """Tokens and requests a metered backend counted; None where it counted none."""
    shards: Sequence[Mapping[str, Any]] | None = None
    """A merged run's shards (``shard``, ``dir`` and the server's ``base_url`` where each had one)."""
    imported: Mapping[str, Any] | None = None
    """Answers computed elsewhere: what was imported and how (``lingdiag score … --out``)."""
    source: Path | None = field(default=None, compare=False)
    """The file this was read from (named in errors); not part of ``meta.json``."""

    @property
    def suite(self) -> str:
        """``config.suite``."""
        return str(self.config["suite"])

    @property
    def model(self) -> str:
        """The model's display name: what the backend called it, else the configured spec."""
        return self.identity.name if self.identity.name is not None else str(self.config.get("model", ""))

    @property
    def dataset(self) -> str:
        """The dataset spec of the run (``builtin``, ``official`` or a path)."""
        return str(self.config.get("dataset", ""))

    @property
    def n_params(self) -> float | None:
        """The parameter count the backend recorded, if any."""
        return self.identity.n_params

    @property
    def run_config(self) -> RunConfig:
        """The recorded configuration, validated.

        Raises:
            RunError: it is not a configuration this version reads (naming ``meta.json`` and the field).
        """
        try:
            return RunConfig.model_validate(dict(self.config))
        except ValidationError as e:
            raise RunError(one_line(e, self.source or META, root="config")) from None

    def suite_of(self, run_dir: Path) -> Suite:
        """The suite the run's records belong to: the copy of its suite file where the run kept
        one (the file may have moved or changed since), else the registered name in its config.
        """
        copy = Path(run_dir) / SUITE_COPY
        if self.suite_file and copy.is_file():
            expected = self.suite_file.get("sha256")
            actual = sha256_file(copy)
            # The copy is the file's text, so a file that began with a byte-order mark lost it.
            with_bom = hashlib.sha256(b"\xef\xbb\xbf" + copy.read_bytes()).hexdigest()
            if expected not in (actual, with_bom):  # an edited copy would change the metrics read from the records
                raise RunError(f"{copy}: SHA-256 {actual} is not the {expected} meta.json records for the suite file "
                               "the run used; restore the copy (or the file it came from) before reading this run")
            return SUITES.get(str(copy))
        return SUITES.get(self.suite)

    def to_json(self) -> dict[str, Any]:
        """The ``meta.json`` object: every part this run has, under its key."""
        parts: dict[str, Any] = {
            "schema_version": self.schema_version, "config": self.config, "model": self.identity.fields,
            "dataset": self.checksums, "versions": self.versions, "lock": self.lock, "seed": self.seed,
            "timings": self.timings, "skipped": self.skipped, "scoring_policies": self.scoring_policies,
            "suite_file": self.suite_file, "thinking": self.thinking, "after_thinking": self.after_thinking,
            "precision": self.precision,
            "excluded": None if self.excluded is None else [{"item_id": e.item_id, "reason": e.reason}
                                                            for e in self.excluded],
            "usage": self.usage, "shards": self.shards, "imported": self.imported,
        }
        return {k: v for k, v in parts.items() if v is not None}

    @classmethod
    def from_json(cls, meta: Any, path: Path) -> RunMeta:
        """The typed view of a parsed ``meta.json`` at ``path``.

        Raises:
            RunError: one line naming ``path`` and the key that is unknown, missing or of the wrong type.
        """
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise RunError(f"{path}: not a run's meta.json (no config object)")
        if not isinstance(meta["config"].get("suite"), str):
            raise RunError(f"{path}, field 'config.suite': missing or not a string")
        for key in meta:
            if key not in _JSON_TYPES:
                raise RunError(f"{path}: unknown key {key!r} (known: {', '.join(_JSON_TYPES)})")
        for key in _REQUIRED:
            if key not in meta:
                raise RunError(f"{path}: missing key {key!r}")
        for key, value in meta.items():
            kind, what = _JSON_TYPES[key]
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise RunError(f"{path}, field {key!r}: {type(value).__name__}, not {what}")
        return cls(config=meta["config"], identity=ModelIdentity(meta["model"]),
                   schema_version=meta.get("schema_version"), checksums=meta.get("dataset"),
                   versions=meta.get("versions"), lock=meta.get("lock"), seed=meta.get("seed"),
                   timings=meta.get("timings"), skipped=meta.get("skipped"),
                   scoring_policies=meta.get("scoring_policies"), suite_file=meta.get("suite_file"),
                   thinking=meta.get("thinking"), after_thinking=meta.get("after_thinking"),
                   precision=meta.get("precision"), usage=meta.get("usage"),
                   excluded=None if meta.get("excluded") is None else tuple(
                       Excluded(str(e.get("item_id", "")), str(e.get("reason", "")))
                       for e in meta["excluded"] if isinstance(e, Mapping)),
                   shards=meta.get("shards"), imported=meta.get("imported"),
                   source=Path(path))

    @classmethod
    def read(cls, path: Path) -> RunMeta:
        """Read ``meta.json`` at ``path``; damaged, empty or of another shape is a one-line ``RunError``."""
        try:
            meta = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            where = f"line {e.lineno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise RunError(f"{path}, {where}: not a run's meta.json (damaged or empty)") from None
        except OSError as e:
            raise RunError(f"cannot read {path}: {e.strerror or e}") from None
        return cls.from_json(meta, path)


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
    suite = meta.suite_of(run_dir)
    model = meta.model
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for n, r in enumerate(store.load_records(), 1):
        if suite.labels and r.label not in (*suite.labels, UNPARSED, UNFINISHED):
            raise RunError(f"{store.items_path}, line {n}, field 'label': {r.label!r} is not a {suite.name} label "
                           f"({', '.join(suite.labels)} or {UNPARSED})")
        by_condition[r.condition].append(r)
    rows = [ResultRow(model, c, dict(rs[0].axes), suite.condition_metrics(rs), str(run_dir), meta.dataset,
                      meta.n_params)
            for c, rs in by_condition.items()]
    records = [r for rs in by_condition.values() for r in rs]
    return LoadedRun(Path(run_dir), suite.name, model, meta, rows, frozenset(r.item_id for r in records), records)
