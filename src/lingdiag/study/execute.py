"""``study run``: plan, then run every run not done, resuming and retrying.

Whether a run is done is its directory's state (``lingdiag.rundir.state``) against the plan:
finished, every item answered, and current — its configuration, data files and suite file are
what the study plans now. A **stale** run (one of them changed since it ran) is moved aside to
``OUT/superseded/<key>/<n>/``, kept whole, and run again; a run a process is writing is left to it.

Here (the default), runs go model by model: a model is loaded once (behind the shared response
cache) for all of its suites and released before the next. A done run is never redone and
its model never loaded; a partial one resumes (the run itself resumes from its records); a
failed one is tried again while its failed attempts number at most ``retries``, its one-line
reason kept in ``study.json``. A process killed mid-run leaves that run partial, not failed.
Elsewhere (``where.executor``: local, slurm, ray), each run is one job of ``lingdiag submit``'s
executors, which load the model per job.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.cluster.submit import EXECUTORS, Resources, ShardTask
from lingdiag.config import RunConfig
from lingdiag.engine.run import Plan, Progress, check_run, plan, run
from lingdiag.errors import LingdiagError, located
from lingdiag.io.atomic import make_dir
from lingdiag.models.base import Backend, Capabilities
from lingdiag.models.cache import cached
from lingdiag.models.door import check_model, load_model
from lingdiag.rundir import Inputs, Phase, RunState, RunStore, Status, run_state
from lingdiag.rundir.study import RunEntry, StudyState, read_state, write_state
from lingdiag.study.plan import PlannedRun, plan_study, replanned
from lingdiag.study.schema import StudyFile, Where

Say = Callable[[str], None]
Configs = dict[str, RunConfig]
"""Run key → its planned configuration (``study.json`` holds it with URL credentials redacted)."""
Planned = dict[str, Inputs]
"""Run key → what it is computed from now (its configuration and the SHA-256 of every file it reads)."""
FLUSH_SECONDS = 5.0
"""How often a run in progress adds its seconds and items to ``study.json`` (so ``study status`` has an ETA
during the first run, and a killed attempt's time is kept)."""
SUPERSEDED = "superseded"
"""Where a stale run's directory goes (``OUT/superseded/<key>/<n>``) before the run is done again."""


def reason(e: BaseException) -> str:
    """One line saying why a run failed (a lingdiag error as it reads, else its type first)."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, LingdiagError) else f"{type(e).__name__}: {text}"


@dataclass(frozen=True)
class Models:
    """How a study checks and loads its models: the providers by default (tests give stand-ins)."""

    load: Callable[[RunConfig], Backend] = load_model
    """A run's model, loaded (not cached)."""
    check: Callable[[RunConfig], Capabilities | None] = check_model
    """A run's model spec and options checked without loading a weight, and what its backend will serve
    (None: nothing declared, as for test stand-ins)."""


def check_plan(runs: Sequence[PlannedRun], models: Models = Models()) -> dict[str, Plan]:
    """Plan each run (suite, data, axes and options validated) and check everything it would refuse once
    its models load (``engine.run.check_run``: each model's spec, provider options, device and offline
    availability, what the axes ask of its backend, the judge model) before any model loads.

    Raises:
        LingdiagError: one line naming the run, where the study file sets it and what is wrong.
    """
    plans = {}
    checked: dict[str, Capabilities | None] = {}

    def check(config: RunConfig) -> Capabilities | None:  # each model once, however many runs it has
        model = config.model_key()
        if model not in checked:
            checked[model] = models.check(config)
        return checked[model]

    for r in runs:
        try:
            plans[r.key] = plan(r.config)
            check_run(r.config, plans[r.key], check)
        except LingdiagError as e:
            raise located(e, f"run {r.key} ({r.origin})") from None
    return plans


def _record(entry: RunEntry, state: RunState, seconds: float, error: str | None, retries: int) -> None:
    """Update ``entry``'s attempts after one (``seconds``: its time not yet counted): done if its directory
    says so, else failed with its reason.
    """
    entry.state.items_done = state.recorded
    entry.state.seconds += seconds
    if error is None and state.complete:
        entry.state.status, entry.state.reason = Status.DONE, None
        return
    entry.state.status, entry.state.attempts = Status.FAILED, entry.state.attempts + 1
    left = retries + 1 - entry.state.attempts
    again = (f"running the study again retries it ({left} attempt{'s' * (left != 1)} left)" if left > 0 else
             f"gave up after {entry.state.attempts} attempt{'s' * (entry.state.attempts != 1)} (retries: {retries}); "
             "raise retries: in the study file to try again")
    entry.state.reason = (error or (f"{state.failed} items failed in the backend" if state.failed else
                                    state.line or f"the run is {state.status}")) + f"; {again}"


def _supersede(entry: RunEntry, state: RunState, out: Path, say: Say) -> None:
    """Move a stale run's directory aside (kept whole) so that the run is done again from nothing."""
    parent = Path(out) / SUPERSEDED / entry.key
    make_dir(parent)
    n = 1
    while (parent / str(n)).exists():
        n += 1
    state.path.rename(parent / str(n))
    entry.state.status, entry.state.attempts, entry.state.reason, entry.state.items_done = Status.PLANNED, 0, None, 0
    why = "; ".join(c.line for c in state.changes)
    say(f"run {entry.key}: {why}; its directory moved to {parent / str(n)}, running it again")


def _todo(state: StudyState, planned: Planned, out: Path, say: Say) -> list[RunEntry]:
    """The runs to attempt: not done, not running elsewhere, and not failed more than ``retries`` times;
    stale runs moved aside first.
    """
    todo = []
    for entry in state.runs:
        now = run_state(entry.directory(out), planned[entry.key])
        if now.phase is Phase.RUNNING:
            say(f"run {entry.key}: another process is writing it; left to it")
            continue
        if now.changes and now.phase is not Phase.ABSENT:
            _supersede(entry, now, out, say)
        elif now.complete:
            entry.state.status, entry.state.reason = Status.DONE, None
            continue
        if entry.state.status != Status.FAILED or entry.state.attempts <= state.retries:
            todo.append(entry)
    return todo


@dataclass(frozen=True)
class _Session:
    """One ``study run`` over its locked directory: the plan, where notes go, and since when each run's time
    has not been counted in ``study.json``.
    """

    state: StudyState
    configs: Configs
    planned: Planned
    out: Path
    say: Say
    plans: dict[str, Plan] = field(default_factory=dict)
    """Run key → its plan, built once when the study was checked and handed to the run (not planned again)."""
    counted: dict[str, float] = field(default_factory=dict)
    """Run key → the moment up to which its seconds are in ``study.json``."""

    def start(self, entry: RunEntry, at: float | None = None) -> None:
        """Count ``entry``'s time from ``at`` (now by default)."""
        self.counted[entry.key] = time.monotonic() if at is None else at

    def progress(self, entry: RunEntry, inner: Progress | None) -> Progress:
        """``inner`` (a run's progress callback), also adding the run's seconds and items to ``study.json``
        every :data:`FLUSH_SECONDS`.
        """
        done: dict[str, int] = {}

        def line(condition: str, n: int, total: int) -> None:
            if inner is not None:
                inner(condition, n, total)
            done[condition] = n
            now = time.monotonic()
            if now - self.counted.get(entry.key, now) >= FLUSH_SECONDS:
                entry.state.seconds += now - self.counted[entry.key]
                entry.state.items_done = sum(done.values())
                self.counted[entry.key] = now
                write_state(self.out, self.state)
        return line

    def ended(self, entry: RunEntry, error: str | None, seconds: float | None = None) -> None:
        """Record an attempt at ``entry`` by what its directory now says, and write ``study.json``
        (``seconds``: the attempt's time, where it is not the time since :meth:`start`).
        """
        now = run_state(entry.directory(self.out), self.planned[entry.key])
        spent = seconds if seconds is not None else time.monotonic() - self.counted.get(entry.key, time.monotonic())
        _record(entry, now, spent, error, self.state.retries)
        write_state(self.out, self.state)
        if entry.state.status == Status.FAILED:
            self.say(f"run {entry.key} failed (attempt {entry.state.attempts}): {entry.state.reason}")


def _here(session: _Session, load: Callable[[RunConfig], Backend],
          progress: Callable[[RunEntry], Progress | None]) -> None:
    by_model: dict[str, list[RunEntry]] = {}
    todo = _todo(session.state, session.planned, session.out, session.say)
    for entry in todo:  # one load serves the runs of one model (``RunConfig.model_key``)
        by_model.setdefault(session.configs[entry.key].model_key(), []).append(entry)
    write_state(session.out, session.state)
    for entries in by_model.values():
        first = session.configs[entries[0].key]  # the planned config: a URL's credentials are redacted in study.json
        spec = entries[0].model.spec
        started = time.monotonic()
        session.say(f"loading {entries[0].model.label} for {len(entries)} run(s)")
        try:
            backend = cached(load(first))
        except Exception as e:  # noqa: BLE001 - a model that will not load fails its runs, not the study
            for entry in entries:
                session.ended(entry, f"model {spec} did not load: {reason(e)}", time.monotonic() - started)
            continue
        loaded = time.monotonic() - started
        for k, entry in enumerate(entries):
            error = None
            session.start(entry, time.monotonic() - (loaded if k == 0 else 0.0))  # the first run counts the load
            session.say(f"run {entry.key}")
            try:
                run(session.configs[entry.key], entry.directory(session.out), backend=backend, cache=False,
                    progress=session.progress(entry, progress(entry)), planned=session.plans.get(entry.key))
            except Exception as e:  # noqa: BLE001 - one run's failure is recorded; the study goes on
                error = reason(e)
            session.ended(entry, error)
        del backend
        gc.collect()  # the weights go before the next model loads


def _jobs(session: _Session, where: Where) -> None:
    """Each run as one job of a ``submit`` executor (a SLURM array, local processes, Ray tasks)."""
    todo = _todo(session.state, session.planned, session.out, session.say)
    write_state(session.out, session.state)
    if not todo:
        return
    resources = Resources(cpus_per_task=where.cpus_per_task, gpus_per_task=where.gpus_per_task,
                          time_min=where.time_min, partition=where.partition, python=where.python,
                          address=where.address)
    tasks = [ShardTask(session.configs[e.key], e.directory(session.out).resolve(), Path.cwd()) for e in todo]
    before = {e.key: _timed(e.directory(session.out)) for e in todo}
    jobs = EXECUTORS.get(where.executor)(tasks, resources, Path(session.out).resolve() / "jobs")
    for entry, job in zip(todo, jobs, strict=True):
        session.say(f"run {entry.key}: job {job.id}")
    for entry, job in zip(todo, jobs, strict=True):
        error = job.wait().error
        # Each job's own time (the run's timings this session), not the wall time of all the jobs together.
        session.ended(entry, error, max(_timed(entry.directory(session.out)) - before[entry.key], 0.0))


def _timed(run_dir: Path) -> float:
    """The seconds a run's ``meta.json`` records over all its sessions (0 for a run not started)."""
    state = run_state(run_dir)
    return sum((state.meta.timings or {}).values()) if state.meta is not None else 0.0


def run_study(study: StudyFile, out: Path, *, models: Models = Models(),
              progress: Callable[[RunEntry], Progress | None] = lambda _: None,
              say: Say = lambda _: None) -> StudyState:
    """Plan ``study`` into ``out`` and run what is not done.

    Args:
        study: The validated study file.
        out: The study directory (``study.json`` and ``runs/``).
        models: How a run's model is checked at plan time and loaded (the providers').
        progress: A run's progress callback.
        say: Where one-line notes go (loading, each run, stale runs moved aside, failures).

    Returns:
        The study's state as written to ``study.json``.
    """
    runs = plan_study(study)
    try:
        plans = check_plan(runs, models)
    except LingdiagError as e:
        raise (located(e, str(study.source)) if study.source else e) from None
    out = Path(out)
    with RunStore(out).lock():  # one study process per directory
        state = replanned(study.name, study.retries, runs, read_state(out, missing_ok=True), study.compare)
        for entry in state.runs:
            entry.state.items_total = len(plans[entry.key].order())
        session = _Session(state, {r.key: r.config for r in runs},
                           {r.key: plans[r.key].inputs(r.config) for r in runs}, out, say, plans)
        if study.where.executor == "here":
            _here(session, models.load, progress)
        else:
            _jobs(session, study.where)
    say(f"{sum(e.state.status == Status.DONE for e in state.runs)} of {len(state.runs)} runs done")
    return state
