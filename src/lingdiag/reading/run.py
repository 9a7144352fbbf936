"""A run directory read back for reports and analyses: its records (``lingdiag.rundir.read_run``)
with every condition's metrics recomputed through the run's own suite, and the run's name.

Kept outside ``lingdiag.rundir`` so that reading a run directory needs no suite: this is the one
place the two meet. A loaded run **carries its suite object** (a suite file's version as the run
recorded it), so one report can hold runs of two versions of a suite file, each drawn by its own;
nothing downstream looks a run's suite up by name. A run is **named by its place**: a study's run by
its model's name in the study; another by the model its backend named, told apart from a run of
the same name by what differs (the dataset's file name, else its directory relative to the others),
never by a path of the user's machine.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.io.limits import read_regular
from lingdiag.records import UNFINISHED, UNPARSED, ItemRecord, ResultRow
from lingdiag.rundir import SUITE_COPY, RunMeta, RunState, RunStore
from lingdiag.rundir.loaded import checked_state
from lingdiag.rundir.study import Place, place_of
from lingdiag.suite import SUITES, Suite


@dataclass(frozen=True)
class LoadedRun:
    """A run directory read back for reports and analyses (never a model call)."""

    path: Path
    suite: Suite
    """The suite the run's records were scored with: a suite file's own recorded version."""
    model: str
    """The model as this report names it (its rows carry it): the study's name for the model, else
    the backend's, made distinct from the other runs loaded with it (:func:`load_runs`)."""
    meta: RunMeta
    rows: list[ResultRow]
    """One row per condition, metrics recomputed from ``items.jsonl`` with the suite's function."""
    item_ids: frozenset[str] = frozenset()
    """The items the run's records cover (reports flag runs over different items)."""
    records: list[ItemRecord] = field(default_factory=list)
    """Every record, as read once for the metrics (the report's item browser shows them)."""
    state: RunState | None = None
    """Finished, current, how far (None for runs built in memory)."""
    place: Place | None = None
    """The run's entry in its study, if it is a study's run."""
    suite_name: str = ""
    """The suite as this report names it: the study's name for it (a study's run), with its file's
    version where runs of two versions are loaded together (:func:`load_runs`); empty: ``suite.name``."""

    @property
    def suite_title(self) -> str:
        """The suite's name in this report."""
        return self.suite_name or self.suite.name

    @property
    def name(self) -> str:
        """The run as a whole, for notes: ``model × suite`` (the study's names where it is a study's run)."""
        return self.place.entry.name if self.place else f"{self.model} × {self.suite_title}"


def suite_of(meta: RunMeta, run_dir: Path) -> Suite:
    """The suite a run's records belong to: the copy of its suite file where the run kept one
    (the file may have moved or changed since), else the registered name in its config.

    Raises:
        RunError: the copy is not the file ``meta.json`` records (edited since).
    """
    copy = Path(run_dir) / SUITE_COPY
    if meta.suite_file and (copy.exists() or copy.is_symlink()):
        text = read_regular(copy)
        expected = meta.suite_file.sha256
        actual = hashlib.sha256(text).hexdigest()
        # The copy is the file's text, so a file that began with a byte-order mark lost it.
        with_bom = hashlib.sha256(b"\xef\xbb\xbf" + text).hexdigest()
        if expected not in (actual, with_bom):  # an edited copy would change the metrics read from the records
            raise RunError(f"{copy}: SHA-256 {actual} is not the {expected} meta.json records for the suite file "
                           "the run used; restore the copy (or the file it came from) before reading this run")
        key = (meta.suite_file.path, expected)
        if key not in _COMPILED:  # a study's runs share one suite file: compiled once, not once per run
            _COMPILED[key] = SUITES.get(str(copy))
        return _COMPILED[key]
    return SUITES.get(meta.suite)


_COMPILED: dict[tuple[str, str], Suite] = {}
"""Suite files compiled from runs' copies, by the path and SHA-256 ``meta.json`` records (the same text)."""


@dataclass(frozen=True)
class Opened:
    """A run directory opened for reading: its ``meta.json`` and state, its suite, its place in its study
    and the model's name in this report; its records are the reader's to stream or load.
    """

    meta: RunMeta
    state: RunState
    suite: Suite
    place: Place | None
    model: str


def opened(run_dir: Path, name: str | None = None) -> Opened:
    """Open ``run_dir`` (see :class:`Opened`).

    Raises:
        RunError: not a run directory, or one not as a run writes it.
    """
    state = checked_state(run_dir)
    assert state.meta is not None
    place = place_of(Path(run_dir))
    model = name or (place.entry.model.label if place else state.meta.model)
    return Opened(state.meta, state, suite_of(state.meta, run_dir), place, model)


def check_labels(suite: Suite, records: Sequence[ItemRecord], items: Path, before: int = 0) -> None:
    """Refuse a record whose label is not one of ``suite``'s (``before``: the lines read before ``records``).

    Raises:
        RunError: naming the file, the line and the field.
    """
    if not suite.labels:
        return
    for n, r in enumerate(records, before + 1):
        if r.label not in (*suite.labels, UNPARSED, UNFINISHED):
            raise RunError(f"{items}, line {n}, field 'label': {r.label!r} is not a "
                           f"{suite.name} label ({', '.join(suite.labels)} or {UNPARSED})")


def records_of(run_dir: Path) -> list[ItemRecord]:
    """A run's records, for a reader of numbers that needs more of them than its summary holds (the paired
    permutation of a suite's rates, a competence join). The one way to ``items.jsonl`` outside the run
    directory's own code and the writers of runs (a test holds every other module to it); whether the run
    counts is the caller's door's to decide first (``reading.door.accepted``).
    """
    return RunStore(run_dir).load_records()


def rows_of(run: Opened, run_dir: Path, by_condition: Mapping[str, Sequence[ItemRecord]]) -> list[ResultRow]:
    """One row per condition, its metrics recomputed from its records with the run's suite."""
    return [ResultRow(run.model, c, dict(rs[0].axes), run.suite.condition_metrics(rs), str(run_dir),
                      dataset_name(run.meta.dataset), run.meta.n_params)
            for c, rs in by_condition.items()]


def load_run(run_dir: Path, name: str | None = None) -> LoadedRun:
    """Read ``run_dir`` and recompute every condition's metrics from its records.

    Args:
        run_dir: The run directory.
        name: The model's name in this report; default: the study's name for it, else the backend's.
    """
    run = opened(run_dir, name)
    records = RunStore(run_dir).load_records()
    check_labels(run.suite, records, Path(run_dir) / "items.jsonl")
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        by_condition[r.condition].append(r)
    ordered = [r for rs in by_condition.values() for r in rs]
    return LoadedRun(Path(run_dir), run.suite, run.model, run.meta, rows_of(run, run_dir, by_condition),
                     frozenset(r.item_id for r in records), ordered, run.state, run.place,
                     run.place.entry.suite if run.place else "")


def dataset_name(spec: str) -> str:
    """A dataset as a report names it: ``builtin``, ``official``, or a file's name (never its full path)."""
    return Path(spec).name if ("/" in spec or "\\" in spec) else spec


def suite_key(suite: Suite) -> tuple[str, str]:
    """What tells two suites apart: the name, and a suite file's SHA-256."""
    return suite.name, suite.source.sha256 if suite.source else ""


def load_runs(run_dirs: Sequence[Path]) -> list[LoadedRun]:
    """Every run directory, read and recomputed, each named as one report shows them together: two
    runs whose models carry one name get what tells them apart, and runs of two versions of one suite
    file get the versions in the suite's name.
    """
    given = {Path(d).resolve(): Path(d) for d in reversed(run_dirs)}  # one directory given twice is one run
    return distinct([load_run(d) for d in reversed(given.values())])


def distinct(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """``runs`` with distinct model names within each suite and distinct suite names across versions."""
    versions: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        versions[r.suite_title].add(suite_key(r.suite)[1])
    named = [replace(r, suite_name=f"{r.suite_title} (suite file {suite_key(r.suite)[1][:8]})")
             if len(versions[r.suite_title]) > 1 else r for r in runs]
    by_suite: dict[str, list[int]] = defaultdict(list)
    for k, r in enumerate(named):
        by_suite[r.suite_title].append(k)
    out = list(named)
    for members in by_suite.values():
        for k, name in zip(members, _names([named[k] for k in members]), strict=True):
            if name != out[k].model:
                out[k] = replace(out[k], model=name,
                                 rows=[replace(row, model=name) for row in out[k].rows])
    return out


def _names(runs: Sequence[LoadedRun]) -> list[str]:
    """One name per run, distinct: the model, then what differs (dataset, directory) where two clash."""
    names = [r.model for r in runs]
    extras: list[Callable[[LoadedRun], str]] = [lambda r: dataset_name(r.meta.dataset), _relative(runs)]
    for extra in extras:
        clash = {n for n, c in Counter(names).items() if c > 1}
        if not clash:
            break
        values = [extra(r) for r in runs]
        names = [f"{n} · {v}" if n in clash and len({values[j] for j, m in enumerate(names) if m == n}) > 1 else n
                 for n, v in zip(names, values, strict=True)]
    return names


def _relative(runs: Sequence[LoadedRun]) -> Callable[[LoadedRun], str]:
    """A run's directory relative to the deepest directory holding all of ``runs``."""
    paths = [r.path.resolve() for r in runs]
    common = paths[0].parent
    while any(not p.is_relative_to(common) for p in paths) and common != common.parent:
        common = common.parent
    return lambda r: r.path.resolve().relative_to(common).as_posix()
