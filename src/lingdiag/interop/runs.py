"""A harness's task as lingdiag records, and its run directory written in one step.

Every importer (``lmeval``, ``inspect_log``) reads a log into :class:`HarnessRun` each; :func:`write_run`
writes one as an ordinary run directory of the ``harness`` suite (``rundir.write_imported``, then
``engine.finish.finish``, the one end of every run) in a temporary sibling directory renamed into place,
so a refused or interrupted import leaves nothing half-written. :func:`import_all` brings a whole tree
of logs in, one line of progress per run, skipping those already imported from the same file.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from lingdiag.engine.finish import finish, imported
from lingdiag.errors import RunError
from lingdiag.io.atomic import TEMP_SUFFIX, make_dir
from lingdiag.records import ItemRecord
from lingdiag.rundir import RunStore, write_imported
from lingdiag.rundir.meta import META, RunMeta
from lingdiag.suite import SUITES

SUITE = "harness"
"""The suite imported runs belong to (``lingdiag.suites.harness``)."""


@dataclass(frozen=True)
class HarnessRun:
    """One (model, task) of a harness's log, read into lingdiag records."""

    model: str
    task: str
    records: Sequence[ItemRecord]
    samples: Path
    """The file the records were read from (lm-eval's ``samples_*.jsonl``, inspect's log)."""
    samples_sha256: str
    harness: Mapping[str, Any]
    """``meta.json``'s ``imported.harness`` part (``rundir.parts.HarnessSource``)."""

    @property
    def where(self) -> str:
        """The run's directory under ``--out``: the model and the task, each a safe path part."""
        return f"{safe_part(self.model)}/{safe_part(self.task)}"


def safe_part(text: str) -> str:
    """``text`` as one path part: anything but letters, digits, ``.``, ``-``, ``_`` and ``=`` becomes ``__``
    (lm-eval's ``pretrained=/a/b`` and ``hf/org/model`` stay readable), never ``.`` or ``..``.
    """
    part = re.sub(r"[^A-Za-z0-9._=-]+", "__", text).strip(".") or "_"
    return part[:120]


def already(root: Path, run: HarnessRun) -> bool:
    """Whether ``root`` holds ``run`` imported before from the same file (its SHA-256 recorded)."""
    if not (root / META).is_file():
        return False
    meta = RunMeta.read(root / META)
    return meta.imported is not None and meta.imported.sha256 == run.samples_sha256


def write_run(root: Path, run: HarnessRun) -> None:
    """Write ``run`` as the run directory ``root``, finished as every run is (``engine.finish``).

    The directory is built under a temporary sibling and renamed into place last: a refused or
    killed import leaves ``root`` as it was.

    Raises:
        RunError: ``root`` exists and is not empty.
    """
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise RunError(f"{root} already exists and is not empty; use another --out directory")
    make_dir(root.parent)
    tmp = root.parent / f".{root.name}.{os.getpid()}{TEMP_SUFFIX}"
    shutil.rmtree(tmp, ignore_errors=True)
    suite = SUITES.get(SUITE)
    dataset = f"{run.harness['name']}:{run.task}"  # the task, as a report names the run's data; the file is in imported
    try:
        write_imported(tmp, suite=SUITE, model=run.model, dataset=dataset, records=run.records,
                       provenance={"file": str(run.samples), "sha256": run.samples_sha256, "task": run.task,
                                   "harness": dict(run.harness)})
        store = RunStore(tmp)
        finish(store, suite, imported(store.load_records(), run.model, dataset), store.read_meta())
        if root.is_dir():
            root.rmdir()
        os.rename(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def import_all(runs: Iterable[HarnessRun], out: Path, *, log: TextIO | None = None,
               total: int | None = None) -> list[Path]:
    """Write every run under ``out`` (one directory per model and task), saying each one's progress.

    A run already imported there from the same file is kept and named, not written again, so an
    interrupted import of a hundred logs resumes where it stopped. Two runs of one model and task
    from different files get the second file's name after the task.

    Returns:
        The run directories, imported now or before.
    """
    log = log or sys.stderr
    done: list[Path] = []
    seen: set[str] = set()
    for k, run in enumerate(runs, 1):
        where = run.where
        if where in seen:
            where = f"{where}@{safe_part(run.samples.stem)}"
        seen.add(where)
        root = out / where
        count = f"[{k}/{max(k, total)}]" if total else f"[{k}]"  # a task split by filters is more than one run
        if already(root, run):
            print(f"{count} {root}: already imported from {run.samples.name}", file=log)
        else:
            write_run(root, run)
            right = sum(bool(r.correct) for r in run.records)
            print(f"{count} {root}: {run.task}, {len(run.records)} items, accuracy {right}/{len(run.records)} "
                  f"(from {run.samples.name})", file=log)
        done.append(root)
    return done
