"""A run read for numbers into a summary that stays small however many records it holds: its rows
(every condition's metrics, computed through the run's own suite as :func:`~lingdiag.reading.load_run`
does), the conditions that are not interpretable, and its records as columns of small integers
(condition, item, label, language codes; right, wrong or not graded; failed; the decision's margin), in
line order.

A finished run keeps its summary in ``summary.npz`` (``lingdiag.rundir.summary``: written by ``finish``, or
on the first read of a run written before it existed), keyed by the digest of the ``items.jsonl`` it
summarises and by the code that computed it; reading a run whose summary is current opens no record.

A study of forty models × 100,000 items is four million records; read whole, they would not fit in
memory, and nothing across models needs more of a record than its columns. The records of one
condition are held while it is scored (a finished run is in canonical order: one condition after the
other), then dropped; only the columns stay. Codes come from one :class:`Vocabularies` shared by the
runs summarised together, so an item or a label has the same code in every run.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lingdiag.errors import LingdiagError, RunError
from lingdiag.io.limits import Limit
from lingdiag.metrics.interpretable import degenerate_reason
from lingdiag.reading.item_table import COLUMNS as ITEM_COLUMNS
from lingdiag.reading.item_table import ItemTable, TableBuilder, table_of
from lingdiag.reading.run import LoadedRun, Opened, check_labels, dataset_name, opened, suite_key, suite_of
from lingdiag.records import LANGUAGE, UNPARSED, ItemRecord, ResultRow, ScoreOutput
from lingdiag.rundir import RunMeta, RunState, RunStore
from lingdiag.rundir import summary as kept
from lingdiag.rundir.study import Place
from lingdiag.rundir.summary import COLUMNS, VOCABULARIES, Stamp, StoredSummary, producer
from lingdiag.suite import Suite

if TYPE_CHECKING:
    from numpy.typing import NDArray

RIGHT, WRONG, NOT_GRADED = 1, 0, -1
"""A record's outcome in :attr:`Columns.outcome`: not graded is no gold label, or a backend error."""
NONE = -1
"""The code of a missing value (a record with no language tag)."""


class Vocabulary:
    """Strings and their dense integer codes, in the order first seen."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self.names: list[str] = []
        """Code → string."""

    def code(self, text: str) -> int:
        """``text``'s code, a new one the first time."""
        found = self._codes.get(text)
        if found is None:
            found = self._codes[text] = len(self.names)
            self.names.append(text)
        return found

    def get(self, text: str) -> int:
        """``text``'s code, or :data:`NONE` if it was never seen."""
        return self._codes.get(text, NONE)

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class Vocabularies:
    """The codes of the runs summarised together (a study's, a viewer's)."""

    items: Vocabulary = field(default_factory=Vocabulary)
    labels: Vocabulary = field(default_factory=Vocabulary)
    conditions: Vocabulary = field(default_factory=Vocabulary)
    languages: Vocabulary = field(default_factory=Vocabulary)


@dataclass(frozen=True, eq=False)
class Columns:
    """A run's records as columns, in line order: entry ``k`` is line ``k + 1`` of ``items.jsonl``."""

    condition: NDArray[np.int32]
    item: NDArray[np.int32]
    label: NDArray[np.int32]
    language: NDArray[np.int32]
    """The ``language`` tag's code (:data:`NONE` without one)."""
    outcome: NDArray[np.int8]
    """:data:`RIGHT`, :data:`WRONG` (an unparsed answer too) or :data:`NOT_GRADED`."""
    error: NDArray[np.bool_]
    """The backend failed on the item (its outcome is not graded)."""
    margin: NDArray[np.float64]
    """The decision's margin in nats (:func:`margin`; NaN where the answer is no choice between scored texts)."""

    def __len__(self) -> int:
        return len(self.item)

    def of(self, condition: int) -> NDArray[np.intp]:
        """The line indices of one condition's records."""
        return np.flatnonzero(self.condition == condition)


def margin(r: ItemRecord) -> float:
    """A record's decision margin in nats: the one a reduced-precision run recorded, else the chosen text's
    summed log-prob less the runner-up's where the answer is a choice between two or more scored texts;
    NaN where it is neither.
    """
    if r.decision is not None and isinstance(r.decision.get("margin"), int | float):
        return float(r.decision["margin"])
    scores = sorted((o.logprob for o in r.outputs if isinstance(o, ScoreOutput) and o.logprob is not None),
                    reverse=True)
    return scores[0] - scores[1] if len(scores) >= 2 and len(scores) == len(r.outputs) else math.nan


class _Builder:
    """Columns as records stream in: Python lists, one array each at the end; and the per-item table."""

    def __init__(self, vocab: Vocabularies, suite: Suite) -> None:
        self.vocab = vocab
        self.values: tuple[list[int], ...] = ([], [], [], [], [], [])
        self.margins: list[float] = []
        self.items = TableBuilder(suite.stat_tags)

    def add(self, r: ItemRecord) -> None:
        v = self.vocab
        language = r.tags.get(LANGUAGE)
        graded = r.correct is not None and r.error is None
        item = v.items.code(r.item_id)
        self.items.add(item, r)
        for column, value in zip(self.values, (
                v.conditions.code(r.condition), item, v.labels.code(r.label),
                v.languages.code(str(language)) if language not in (None, "") else NONE,
                (RIGHT if r.correct else WRONG) if graded else NOT_GRADED, r.error is not None), strict=True):
            column.append(value)
        self.margins.append(margin(r))

    def columns(self) -> Columns:
        c, i, lab, lang, out, err = self.values
        return Columns(np.array(c, np.int32), np.array(i, np.int32), np.array(lab, np.int32),
                       np.array(lang, np.int32), np.array(out, np.int8), np.array(err, np.bool_),
                       np.array(self.margins, np.float64))


@dataclass(frozen=True, eq=False)
class RunSummary:
    """A run read once (see the module's text)."""

    run: LoadedRun
    """The run as reports name it, with its rows and state; its ``records`` and ``item_ids`` are not kept
    (empty: :attr:`columns` and :attr:`item_ids` hold them)."""
    columns: Columns
    vocab: Vocabularies
    not_interpretable: dict[str, str]
    """Condition → why its answers are not interpretable (:mod:`lingdiag.metrics.interpretable`)."""
    axes: dict[str, dict[str, str]]
    """Condition → its axes."""

    @property
    def item_ids(self) -> frozenset[str]:
        """The items the run's records cover."""
        return frozenset(self.vocab.items.names[k] for k in np.unique(self.columns.item))

    @property
    def unparsed(self) -> NDArray[np.bool_]:
        """Per record: the answer parsed to no label (a failed item aside)."""
        found: NDArray[np.bool_] = (self.columns.label == self.vocab.labels.get(UNPARSED)) & ~self.columns.error
        return found


def _by_condition(records: Iterable[ItemRecord]) -> Iterator[tuple[str, list[ItemRecord]]]:
    """Runs of consecutive records of one condition (a finished run's whole conditions)."""
    current: list[ItemRecord] = []
    for r in records:
        if current and r.condition != current[0].condition:
            yield current[0].condition, current
            current = []
        current.append(r)
    if current:
        yield current[0].condition, current


class _Scored:
    """What a summary keeps of each condition once its records are scored: its metrics through the run's
    suite, its axes, and why its answers are not interpretable.
    """

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self.metrics: dict[str, dict[str, Any]] = {}
        self.flags: dict[str, str] = {}
        self.axes: dict[str, dict[str, str]] = {}

    def score(self, condition: str, records: Sequence[ItemRecord],
              metrics: Mapping[str, Any] | None = None) -> None:
        """Keep ``condition``'s metrics (``metrics`` where its caller computed them from these records), axes
        and flag.
        """
        self.metrics[condition] = dict(self.suite.condition_metrics(records) if metrics is None else metrics)
        self.axes[condition] = dict(records[0].axes)
        if (why := degenerate_reason(records)) is not None:
            self.flags[condition] = why


@dataclass(frozen=True, eq=False)
class Scanned:
    """A run read once, its codes its own (:func:`scan`): what a worker process hands back, before the
    codes are made the shared vocabulary's (:func:`joined`).
    """

    run_dir: Path
    model: str
    meta: RunMeta
    state: RunState
    place: Place | None
    names: Vocabularies
    """This run's own codes."""
    columns: Columns
    rows: list[ResultRow]
    flags: dict[str, str]
    axes: dict[str, dict[str, str]]


def _scanned(run: Opened, run_dir: Path, stored: StoredSummary) -> Scanned:
    """The run's summary as :class:`Scanned`: its rows named as this report names the run."""
    names = Vocabularies()
    for vocabulary in VOCABULARIES:
        for text in stored.names[vocabulary]:
            getattr(names, vocabulary).code(text)
    c = stored.columns
    columns = Columns(c["condition"], c["item"], c["label"], c["language"], c["outcome"], c["error"], c["margin"])
    rows = [ResultRow(run.model, condition, dict(stored.axes.get(condition, {})), metrics, str(run_dir),
                      dataset_name(run.meta.dataset), run.meta.n_params)
            for condition, metrics in stored.metrics.items()]
    return Scanned(Path(run_dir), run.model, run.meta, run.state, run.place, names, columns, rows,
                   dict(stored.flags), {k: dict(v) for k, v in stored.axes.items()})


def stored_summary(records: Iterable[ItemRecord], suite: Suite, records_sha256: str, stamp: Stamp | None,
                   metrics: Mapping[str, Mapping[str, Any]]) -> StoredSummary:
    """The summary of a run whose ``items.jsonl`` (SHA-256 ``records_sha256``) holds ``records``, in line
    order and canonical (each condition's records together): what ``finish`` writes, with the
    ``suite.condition_metrics`` of each condition it already computed (``metrics``), not counted again.
    """
    names = Vocabularies()
    builder, scored = _Builder(names, suite), _Scored(suite)
    with _no_cycle_collection():
        for condition, rs in _by_condition(records):
            for r in rs:
                builder.add(r)
            scored.score(condition, rs, metrics[condition])
    return _stored(builder, names, scored, records_sha256, stamp)


def _stored(builder: _Builder, names: Vocabularies, scored: _Scored, records_sha256: str,
            stamp: Stamp | None) -> StoredSummary:
    columns = builder.columns()
    return StoredSummary(records_sha256, stamp, producer(), suite_key(scored.suite),
                         {v: list(getattr(names, v).names) for v in VOCABULARIES},
                         _plain(scored.metrics), scored.axes, scored.flags,
                         {name: getattr(columns, name) for name in COLUMNS}, builder.items.columns)


def _plain(metrics: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``metrics`` as JSON gives them back (tuples as lists): what a summary read later holds, so a report
    from a fresh summary and from a stored one are the same.
    """
    out: dict[str, dict[str, Any]] = json.loads(json.dumps(metrics, allow_nan=True))
    return out


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Cyclic garbage collection paused while records stream in: they hold no cycles, and a collection
    walking the hundred thousand records of a condition held costs a third of the reading.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_MEMORY: dict[tuple[str, str, str], StoredSummary] = {}
"""Summaries of runs whose directory could not be written (read-only storage), by directory, records'
digest and producer: computed once per process."""


def scan(run_dir: Path, name: str | None = None) -> Scanned:
    """``run_dir`` read for numbers: from its ``summary.npz`` where that summarises its records as they are
    now (``items.jsonl`` not even opened while it is the file the summary hashed), else its records streamed
    once, hashed as they stream, and the summary written (a finished run; in memory where its directory
    cannot be written).

    Raises:
        RunError: the run is not readable, or a record is not one of its suite's (naming file, line, field).
    """
    store = RunStore(run_dir)
    stored = kept.read_summary(store)
    if stored is not None and stored.producer == producer():
        run = opened(run_dir, name)  # its state trusts the summary's digest while items.jsonl is the file hashed
        digest = kept.records_digest(store)
        if digest == stored.records_sha256 and stored.suite == suite_key(run.suite):
            stamp = Stamp.of(store.items_path)
            if stamp != stored.stamp and run.state.finished:  # moved or copied: the same records, a new stamp
                found = kept.read_items(store)
                if found is not None and found[0].get("records_sha256") == stored.records_sha256:
                    kept.write_summary(store, replace(stored, stamp=stamp, items=found[1]))
            return _scanned(run, run_dir, stored)
    memory = _in_memory(store)
    if memory is not None:
        return _scanned(opened(run_dir, name), run_dir, memory)
    return _streamed(run_dir, store, name)


def _in_memory(store: RunStore) -> StoredSummary | None:
    key = (str(store.root.absolute()), producer())
    found = [s for (root, sha, made), s in _MEMORY.items() if (root, made) == key]
    if not found:
        return None
    digest = kept.records_digest(store)
    return next((s for s in found if s.records_sha256 == digest), None)


def _streamed(run_dir: Path, store: RunStore, name: str | None) -> Scanned:
    """The records streamed once (hashed as they stream), then the run opened (its state trusts that digest)
    and its summary kept.
    """
    suite = suite_of(store.read_meta(), run_dir)
    names = Vocabularies()
    builder, scored, line = _Builder(names, suite), _Scored(suite), 0
    stamp = Stamp.of(store.items_path)
    digest = hashlib.sha256()
    with _no_cycle_collection():
        for condition, records in _by_condition(store.records(digest)):
            if condition in scored.metrics:  # not in canonical order (a run resumed, not finished): read it whole
                return _whole(run_dir, name)
            check_labels(suite, records, store.items_path, line)
            line += len(records)
            for r in records:
                builder.add(r)
            scored.score(condition, records)
    if stamp is not None:
        kept.remember(store.items_path, stamp, digest.hexdigest())
    run = opened(run_dir, name)
    stored = _stored(builder, names, scored, digest.hexdigest(), stamp)
    if run.state.finished and stamp is not None and Stamp.of(store.items_path) == stamp:
        if not kept.write_summary(store, stored):
            _MEMORY[(str(store.root.absolute()), stored.records_sha256, stored.producer)] = stored
    return _scanned(run, run_dir, stored)


def _whole(run_dir: Path, name: str | None) -> Scanned:
    """A run whose conditions interleave (stopped, never finished): every record held at once, then grouped."""
    run = opened(run_dir, name)
    store = RunStore(run_dir)
    records = store.load_records()
    check_labels(run.suite, records, store.items_path)
    names = Vocabularies()
    builder, scored = _Builder(names, run.suite), _Scored(run.suite)
    by: dict[str, list[ItemRecord]] = {}
    for r in records:
        builder.add(r)
        by.setdefault(r.condition, []).append(r)
    for condition, rs in by.items():
        scored.score(condition, rs)
    return _scanned(run, run_dir, _stored(builder, names, scored, "", None))


def _recoded(codes: NDArray[np.int32], own: Vocabulary, shared: Vocabulary) -> NDArray[np.int32]:
    """``codes`` of ``own`` as ``shared``'s (:data:`NONE` kept)."""
    table = np.array([shared.code(name) for name in own.names] + [NONE], np.int32)
    out: NDArray[np.int32] = table[codes]  # NONE (-1) indexes the table's last entry, NONE
    return out


def joined(scanned: Scanned, vocab: Vocabularies) -> RunSummary:
    """``scanned`` with its codes made ``vocab``'s (extended with its strings), as a summary."""
    own, c = scanned.names, scanned.columns
    columns = Columns(_recoded(c.condition, own.conditions, vocab.conditions), _recoded(c.item, own.items, vocab.items),
                      _recoded(c.label, own.labels, vocab.labels), _recoded(c.language, own.languages, vocab.languages),
                      c.outcome, c.error, c.margin)
    place = scanned.place
    # Neither its records nor its item ids are kept in the run (its columns hold them: RunSummary.item_ids):
    # a set of 100,000 ids per run is most of a study's memory.
    loaded = LoadedRun(scanned.run_dir, suite_of(scanned.meta, scanned.run_dir), scanned.model, scanned.meta,
                       scanned.rows, frozenset(), [], scanned.state, place, place.entry.suite if place else "")
    return RunSummary(loaded, columns, vocab, scanned.flags, scanned.axes)


def summarize(run_dir: Path, vocab: Vocabularies, name: str | None = None) -> RunSummary:
    """Stream ``run_dir``'s records once into its summary.

    Args:
        run_dir: The run directory.
        vocab: The codes shared with the runs read together (extended with this run's).
        name: The model's name in this report (default as :func:`~lingdiag.reading.load_run`).

    Raises:
        RunError: the run is not readable, or a record is not one of its suite's (naming file, line, field).
    """
    return joined(scan(run_dir, name), vocab)


READ_WORKERS = Limit("LINGDIAG_READ_WORKERS", float(len(os.sched_getaffinity(0))),
                     "processes reading a study's runs at once")
"""Processes that read runs at once where there is much to read (default: the CPUs this process may use)."""
PARALLEL_BYTES = 256 * 2**20
"""Below this many bytes of records in all, runs are read in this process (starting workers costs seconds)."""


def _scan_or_why(run_dir: Path) -> Scanned | str:
    """:func:`scan` in a worker: the run, or the one line saying why it could not be read."""
    try:
        return scan(run_dir)
    except LingdiagError as e:
        return str(e)


def scan_all(run_dirs: Sequence[Path]) -> Iterator[Scanned | LingdiagError]:
    """Each run scanned (:func:`scan`), in order, or the error that kept it from being read; by
    :data:`READ_WORKERS` processes at once where the runs hold more than :data:`PARALLEL_BYTES`.
    """
    # Only the runs without a current summary are read from their records.
    size = sum(os.stat(Path(d) / "items.jsonl").st_size for d in run_dirs
               if (Path(d) / "items.jsonl").is_file() and not kept.summarised(RunStore(Path(d))))
    workers = min(int(READ_WORKERS.value), len(run_dirs))
    done = 0
    if workers >= 2 and size >= PARALLEL_BYTES:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        # spawn: a fresh interpreter per worker (the caller may hold threads and locks a fork would copy).
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                for x in pool.map(_scan_or_why, run_dirs):
                    yield x if isinstance(x, Scanned) else RunError(x)
                    done += 1
            return
        except (BrokenProcessPool, OSError):  # workers that cannot start (a script read from stdin): read here
            pass
    for d in run_dirs[done:]:
        try:
            yield scan(d)
        except LingdiagError as e:
            yield e


def summarize_all(run_dirs: Sequence[Path], vocab: Vocabularies) -> list[RunSummary | LingdiagError]:
    """Each run's summary in order, with one vocabulary, or the error that kept it from being read
    (:func:`scan_all`: several processes where there is much to read).
    """
    return [x if isinstance(x, LingdiagError) else joined(x, vocab) for x in scan_all(run_dirs)]


def item_table(run: LoadedRun) -> ItemTable:
    """``run``'s per-item table (``lingdiag.reading.item_table``): from its summary while that summarises
    ``items.jsonl`` as it is now, for this suite (no record opened), or from the summary this process keeps of
    a run it could not write; else from its records, streamed once. A table of records edited since, of
    another run copied in, or torn is never read.
    """
    store = RunStore(run.path)
    found = kept.read_items(store)
    if found is not None:
        header, columns = found
        if kept.current(store, header) and header.get("suite") == list(suite_key(run.suite)):
            table = _table(run, header["names"]["items"], columns)
            if table is not None:
                return table
    memory = _in_memory(store)
    if memory is not None and memory.items is not None and memory.suite == suite_key(run.suite):
        table = _table(run, memory.names["items"], memory.items)
        if table is not None:
            return table
    return table_of(run.path, run.suite_title, run.suite.stat_tags, store.records())


_KINDS: dict[str, tuple[type, ...]] = {"text": (str,), "gold": (str, type(None)), "family": (str,),
                                       "human": (dict, type(None)), "other_gold": (str, type(None))}
"""What each column of a stored item table holds."""


def _table(run: LoadedRun, ids: list[str], columns: Mapping[str, list[Any]]) -> ItemTable | None:
    """The stored ``columns`` as ``run``'s table; None where one is missing or holds another kind."""
    if set(columns) != set(ITEM_COLUMNS) or not all(isinstance(v, _KINDS[c]) for c in ITEM_COLUMNS
                                                     for v in columns[c]):
        return None
    return ItemTable(run.path, run.suite_title, list(ids), *(list(columns[c]) for c in ITEM_COLUMNS))
