"""``study run``: plan, then run every run not finished, resuming and retrying.

Here (the default), runs go model by model: a model is loaded once (behind the shared response
cache) for all of its suites and released before the next. A finished run is never redone and
its model never loaded; a partial one resumes (the run itself resumes from its records); a
failed one is tried again while its failed attempts number at most ``retries``, its one-line
reason kept in ``study.json``. A process killed mid-run leaves that run partial, not failed.
Elsewhere (``where.executor``: local, slurm, ray), each run is one job of ``lingdiag submit``'s
executors, which load the model per job.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from lingdiag.cluster.merge import finished
from lingdiag.cluster.submit import EXECUTORS, Resources, ShardTask
from lingdiag.config import RunConfig
from lingdiag.engine.run import Progress, load_model, plan, run
from lingdiag.errors import LingdiagError
from lingdiag.models.base import Backend
from lingdiag.models.cache import cached
from lingdiag.rundir import RunStore
from lingdiag.study.plan import PlannedRun, plan_study
from lingdiag.study.schema import StudyFile, Where
from lingdiag.study.state import RunEntry, StudyState, merged, read_state, write_state

Loader = Callable[[RunConfig], Backend]
Say = Callable[[str], None]
Configs = dict[str, RunConfig]
"""Run key → its planned configuration (``study.json`` holds it with URL credentials redacted)."""


def reason(e: BaseException) -> str:
    """One line saying why a run failed (a lingdiag error as it reads, else its type first)."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if isinstance(e, LingdiagError) else f"{type(e).__name__}: {text}"


def check_plan(runs: Sequence[PlannedRun]) -> dict[str, int]:
    """Plan each run (data read, options and axes validated) before any model loads; run key →
    items it records.

    Raises:
        LingdiagError: a run's suite, data, axes or options are wrong, with the run named.
    """
    counts = {}
    for r in runs:
        try:
            counts[r.key] = len(plan(r.config).order())
        except LingdiagError as e:
            raise type(e)(f"run {r.key}: {e}") from None
    return counts


def _record(entry: RunEntry, config: RunConfig, out: Path, started: float, error: str | None) -> None:
    """Update ``entry`` after an attempt: done if finished, else failed with its reason."""
    where = entry.directory(out)
    records = RunStore(where).load_records() if where.is_dir() else []
    entry.state.items_done = len({(r.condition, r.item_id) for r in records if r.error is None})
    entry.state.seconds += time.monotonic() - started
    if error is None and finished(config, where):
        entry.state.status, entry.state.reason = "done", None
        return
    failed_items = sum(r.error is not None for r in records)
    entry.state.status, entry.state.attempts = "failed", entry.state.attempts + 1
    entry.state.reason = error or f"{failed_items} items failed in the backend; running the study again retries them"


def _todo(state: StudyState, configs: Configs, out: Path) -> list[RunEntry]:
    """The runs to attempt: not finished, and not failed more than ``retries`` times."""
    todo = []
    for entry in state.runs:
        if finished(configs[entry.key], entry.directory(out)):
            entry.state.status, entry.state.reason = "done", None
        elif entry.state.status != "failed" or entry.state.attempts <= state.retries:
            todo.append(entry)
    return todo


def _here(state: StudyState, configs: Configs, out: Path, load: Loader,
          progress: Callable[[RunEntry], Progress | None], say: Say) -> None:
    by_model: dict[str, list[RunEntry]] = {}
    for entry in _todo(state, configs, out):  # one load serves the runs of one spec with the same provider options
        loading = {k: entry.config.get(k) for k in ("model", "model_options", "batch_tokens", "trust_remote_code")}
        by_model.setdefault(json.dumps(loading, sort_keys=True, default=str), []).append(entry)
    write_state(out, state)
    for entries in by_model.values():
        first = configs[entries[0].key]  # the planned config: a URL's credentials are redacted in study.json
        spec = entries[0].model.spec
        started = time.monotonic()
        say(f"loading {entries[0].model.label} for {len(entries)} run(s)")
        try:
            backend = cached(load(first))
        except Exception as e:  # noqa: BLE001 - a model that will not load fails its runs, not the study
            for entry in entries:
                _record(entry, configs[entry.key], out, started, f"model {spec} did not load: {reason(e)}")
            write_state(out, state)
            continue
        for entry in entries:
            _attempt(entry, configs[entry.key], out, backend, progress(entry), say)
            write_state(out, state)
        del backend
        gc.collect()  # the weights go before the next model loads


def _attempt(entry: RunEntry, config: RunConfig, out: Path, backend: Backend, progress: Progress | None,
             say: Say) -> None:
    started, error = time.monotonic(), None
    say(f"run {entry.key}")
    try:
        run(config, entry.directory(out), backend=backend, cache=False, progress=progress)
    except Exception as e:  # noqa: BLE001 - one run's failure is recorded; the study goes on
        error = reason(e)
    _record(entry, config, out, started, error)
    if entry.state.status == "failed":
        say(f"run {entry.key} failed (attempt {entry.state.attempts}): {entry.state.reason}")


def _jobs(state: StudyState, configs: Configs, out: Path, where: Where, say: Say) -> None:
    """Each run as one job of a ``submit`` executor (a SLURM array, local processes, Ray tasks)."""
    todo = _todo(state, configs, out)
    write_state(out, state)
    if not todo:
        return
    resources = Resources(cpus_per_task=where.cpus_per_task, gpus_per_task=where.gpus_per_task,
                          time_min=where.time_min, partition=where.partition, python=where.python,
                          address=where.address)
    tasks = [ShardTask(configs[e.key], e.directory(out).resolve(), Path.cwd()) for e in todo]
    started = time.monotonic()
    jobs = EXECUTORS.get(where.executor)(tasks, resources, Path(out).resolve() / "jobs")
    for entry, job in zip(todo, jobs, strict=True):
        say(f"run {entry.key}: job {job.id}")
    for entry, job in zip(todo, jobs, strict=True):
        _record(entry, configs[entry.key], out, started, job.wait().error)
        write_state(out, state)


def run_study(study: StudyFile, out: Path, *, load: Loader = load_model,
              progress: Callable[[RunEntry], Progress | None] = lambda _: None,
              say: Say = lambda _: None) -> StudyState:
    """Plan ``study`` into ``out`` and run what is not finished.

    Args:
        study: The validated study file.
        out: The study directory (``study.json`` and ``runs/``).
        load: How a run's model is loaded (``lingdiag.engine.run.load_model``).
        progress: A run's progress callback.
        say: Where one-line notes go (loading, each run, failures).

    Returns:
        The study's state as written to ``study.json``.
    """
    runs = plan_study(study)
    totals = check_plan(runs)
    configs = {r.key: r.config for r in runs}
    out = Path(out)
    with RunStore(out).lock():  # one study process per directory
        state = merged(study.name, study.retries, runs, read_state(out, missing_ok=True))
        for entry in state.runs:
            entry.state.items_total = totals[entry.key]
        if study.where.executor == "here":
            _here(state, configs, out, load, progress, say)
        else:
            _jobs(state, configs, out, study.where, say)
    say(f"{sum(e.state.status == 'done' for e in state.runs)} of {len(state.runs)} runs done")
    return state
