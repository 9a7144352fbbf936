"""The shards of one run as jobs: a SLURM job array or local processes (submitit), or Ray
tasks; then ``merge``.

Each job runs one shard in-process with :func:`run_shard` into ``OUT/shards/K-of-N``, a
normal resumable run directory, so a shard that finished is not submitted again and one
that failed or was killed resumes where it stopped. The engines are the ones clusters
already run; lingdiag only builds the N shard configurations and reads the directories back.
Executors are a registry of name → function; ``submitit`` and ``ray`` load only when chosen.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lingdiag.cluster.merge import MergeResult, merge
from lingdiag.config import RunConfig, Shard
from lingdiag.engine.run import plan, run
from lingdiag.errors import ConfigError, LingdiagError, MissingDependency
from lingdiag.registry import Registry
from lingdiag.rundir import run_state


@dataclass(frozen=True)
class Resources:
    """What each shard's job asks the scheduler for."""

    cpus_per_task: int = 1
    gpus_per_task: int = 0
    time_min: int = 24 * 60
    """Wall-time limit per shard, in minutes (submitit's local executor kills a job after it too)."""
    partition: str | None = None
    """SLURM partition (``--partition``); the cluster's default if None."""
    python: str | None = None
    """Shell command that starts Python in each job, e.g. ``apptainer exec --nv lingdiag.sif python``
    (submitit); the submitter's own interpreter if None."""
    address: str | None = None
    """Ray cluster address (``ray://host:10001`` or ``auto``); None joins ``RAY_ADDRESS`` or starts a local one."""


@dataclass(frozen=True)
class ShardTask:
    """One shard as a job receives it (pickled by submitit or Ray)."""

    config: RunConfig
    out: Path
    cwd: Path
    """The submitting directory: relative dataset paths in ``config`` resolve from here."""
    cache: bool = True


@dataclass(frozen=True)
class ShardOutcome:
    """What one shard's job reports back."""

    failed_items: int = 0
    """Items the backend failed on (the run finished; running it again retries them)."""
    error: str | None = None
    """Why the shard did not run (a lingdiag error, one line)."""


def run_shard(task: ShardTask) -> ShardOutcome:
    """The body of every job: run one shard in this process."""
    os.chdir(task.cwd)
    try:
        result = run(task.config, task.out, cache=task.cache)
    except LingdiagError as e:  # one line for the submitter, rather than a pickled traceback
        return ShardOutcome(error=str(e))
    return ShardOutcome(failed_items=sum(int(m.get("n_errors", 0)) for m in result.metrics.values()))


class Job(Protocol):
    """A submitted shard."""

    @property
    def id(self) -> str:
        """The scheduler's id of the job (SLURM array task, local pid, Ray object)."""
        ...

    def wait(self) -> ShardOutcome:
        """Block until the job ends; a crash or kill is an outcome with ``error``."""
        ...


Executor = Callable[[Sequence[ShardTask], Resources, Path], list[Job]]
"""``(tasks, resources, log folder) -> jobs``: submits every task, returns at once."""

EXECUTORS: Registry[Executor] = Registry("executor")


@dataclass(frozen=True)
class _SubmititJob:
    job: Any

    @property
    def id(self) -> str:
        return str(self.job.job_id)

    def wait(self) -> ShardOutcome:
        from submitit.core.utils import UncompletedJobError

        try:
            outcome: ShardOutcome = self.job.result()
            return outcome
        except UncompletedJobError as e:
            # The message holds the job's traceback; its last "Type: message" line says what happened.
            lines = [x for x in str(e).splitlines() if x and not x.startswith((" ", "-", "You can"))]
            return ShardOutcome(error=f"job {self.id} failed ({lines[-1] if lines else 'no output'}); "
                                      f"log: {self.job.paths.stderr}")


def _submitit(cluster: str, tasks: Sequence[ShardTask], resources: Resources, folder: Path) -> list[Job]:
    try:
        import submitit
    except ImportError as e:
        raise MissingDependency(f"--executor {cluster}", "cluster", ["submitit"]) from e
    python = {f"{cluster}_python": resources.python} if resources.python else {}
    executor = submitit.AutoExecutor(folder=folder, cluster=cluster, **python)
    params: dict[str, Any] = {"name": "lingdiag", "timeout_min": resources.time_min,
                              "cpus_per_task": resources.cpus_per_task,
                              "slurm_array_parallelism": len(tasks)}
    if resources.gpus_per_task:
        params["gpus_per_node"] = resources.gpus_per_task
    if resources.partition:
        params["slurm_partition"] = resources.partition
    executor.update_parameters(**params)
    # One job array on SLURM: array task i runs tasks[i].
    return [_SubmititJob(j) for j in executor.map_array(run_shard, tasks)]


@EXECUTORS.register("local")
def _local(tasks: Sequence[ShardTask], resources: Resources, folder: Path) -> list[Job]:
    return _submitit("local", tasks, resources, folder)


@EXECUTORS.register("slurm")
def _slurm(tasks: Sequence[ShardTask], resources: Resources, folder: Path) -> list[Job]:
    return _submitit("slurm", tasks, resources, folder)


@dataclass(frozen=True)
class _RayJob:
    ref: Any

    @property
    def id(self) -> str:
        return str(self.ref.hex())

    def wait(self) -> ShardOutcome:
        import ray

        try:
            outcome: ShardOutcome = ray.get(self.ref)
            return outcome
        except ray.exceptions.RayError as e:  # a crashed or killed worker, a lost node
            lines = str(e).strip().splitlines()
            return ShardOutcome(error=f"ray task {self.id} failed ({lines[-1] if lines else type(e).__name__})")


@EXECUTORS.register("ray")
def _ray(tasks: Sequence[ShardTask], resources: Resources, folder: Path) -> list[Job]:
    try:
        import ray
    except ImportError as e:
        raise MissingDependency("--executor ray", "cluster", ["ray"]) from e
    if not ray.is_initialized():
        ray.init(address=resources.address, include_dashboard=False)
    remote = ray.remote(num_cpus=resources.cpus_per_task, num_gpus=resources.gpus_per_task,
                        max_retries=0)(run_shard)
    return [_RayJob(remote.remote(t)) for t in tasks]


def shard_configs(config: RunConfig, n: int, base_urls: Sequence[str] = ()) -> list[RunConfig]:
    """The N shard configurations of ``config`` (each with the URL list, if one was given)."""
    if config.shard is not None:
        raise ConfigError("submit splits the run into shards itself; drop --shard from the run arguments")
    if base_urls and len(base_urls) != n:
        raise ConfigError(f"--base-url-per-shard lists {len(base_urls)} URLs for {n} shards; give one per shard")
    fields = config.model_dump()
    return [RunConfig.model_validate({**fields, "shard": Shard(index=k, count=n), "shard_base_urls": list(base_urls)})
            for k in range(1, n + 1)]


def shard_dir(out: Path, shard: Shard) -> Path:
    """``OUT/shards/K-of-N``."""
    return Path(out) / "shards" / f"{shard.index}-of-{shard.count}"


@dataclass
class SubmitResult:
    """What ``submit`` did."""

    submitted: dict[str, str] = field(default_factory=dict)
    """Shard (``K/N``) → job id, for the shards that were submitted."""
    done: list[str] = field(default_factory=list)
    """Shards already finished in an earlier submission (not submitted again)."""
    outcomes: dict[str, ShardOutcome] = field(default_factory=dict)
    """Shard → how its job ended (when waited for)."""
    merged: MergeResult | None = None
    """The merged run, once every shard has finished."""


@dataclass(frozen=True)
class SubmitOptions:
    """How ``submit`` runs the shards."""

    shards: int
    executor: str = "local"
    resources: Resources = Resources()
    wait: bool = True
    base_urls: tuple[str, ...] = ()
    """One server URL per shard (``--base-url-per-shard FILE``) for an ``openai:`` model."""
    cache: bool = True


def submit(config: RunConfig, out: Path, options: SubmitOptions) -> SubmitResult:
    """Run ``config`` as ``options.shards`` shards on an executor, then merge them into ``out``.

    Args:
        config: The whole run's configuration (no ``shard``).
        out: The merged run's directory; shards go to ``OUT/shards/K-of-N``, job logs to ``OUT/jobs``.
        options: Executor, shard count, resources, waiting.

    Returns:
        What was submitted and skipped, how each job ended, and the merged run if all finished.
    """
    executor = EXECUTORS.get(options.executor)
    if not options.wait and options.executor == "ray":
        raise ConfigError("--no-wait needs a batch scheduler (slurm or local): Ray tasks end with their driver")
    out = Path(out).resolve()
    configs = shard_configs(config, options.shards, options.base_urls)
    result = SubmitResult()
    tasks = []
    for c in configs:
        assert c.shard is not None
        if run_state(shard_dir(out, c.shard), plan(c).inputs(c)).complete:
            result.done.append(str(c.shard))
        else:
            tasks.append(ShardTask(c, shard_dir(out, c.shard), Path.cwd(), options.cache))
    jobs = executor(tasks, options.resources, out / "jobs") if tasks else []
    names = [str(t.config.shard) for t in tasks]
    result.submitted = {name: job.id for name, job in zip(names, jobs, strict=True)}
    if not options.wait:
        return result
    result.outcomes = {name: job.wait() for name, job in zip(names, jobs, strict=True)}
    if not any(o.error for o in result.outcomes.values()):
        result.merged = merge([shard_dir(out, c.shard) for c in configs if c.shard is not None], out)
    return result
