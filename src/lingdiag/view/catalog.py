"""The runs and groups under the directories ``lingdiag view`` was given, and each run's state.

A run is a directory holding ``meta.json``; a group (a study) is a directory holding runs, with or
without the ``study.json`` the study command writes. Directories are walked without following a
symlink out of the given ones: every path is resolved and kept only inside a given root.

A run's state comes from its files: **running** while its ``.lock`` is held (an ``flock`` the kernel
drops when the holder dies, read from ``/proc/locks`` so the viewer never takes the lock itself);
**finished** when ``metrics.json`` is at least as new as ``items.jsonl``; **failed** when it finished
with failed items (backend errors); **stale lock** when it stopped unfinished (killed, or crashed).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import LingdiagError
from lingdiag.metrics.core import N_ERRORS
from lingdiag.rundir import META, RunMeta
from lingdiag.view.files import inside, read_text

MAX_DEPTH = 4
"""Directory levels below a given directory searched for runs."""
RUNNING, FINISHED, FAILED, STALE = "running", "finished", "failed", "stale lock"


@dataclass(frozen=True, slots=True)
class Run:
    """One run directory found."""

    id: str
    """Its name in URLs: the given directory's number and the path below it (``0/runs/a``)."""
    path: Path
    """Resolved."""
    group: str | None
    """The id of the group holding it, if any."""


@dataclass(frozen=True, slots=True)
class Group:
    """A directory holding runs (a study)."""

    id: str
    path: Path
    runs: tuple[str, ...]
    """Its runs' ids."""
    study: bool
    """It holds a ``study.json``."""


@dataclass(frozen=True, slots=True)
class Catalog:
    """Everything found, by id."""

    runs: dict[str, Run]
    groups: dict[str, Group]


def _walk(root: Path, here: Path, depth: int) -> list[Path]:
    try:
        children = sorted(p for p in here.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    found = []
    for child in children:
        real = child.resolve()
        if not real.is_relative_to(root):  # a symlink out of the given directory
            continue
        if (real / META).is_file():
            found.append(real)
        elif depth < MAX_DEPTH:
            found += _walk(root, real, depth + 1)
    return found


def catalog(roots: list[Path]) -> Catalog:
    """The runs and groups under ``roots`` (a root may itself be a run)."""
    runs: dict[str, Run] = {}
    members: dict[Path, list[str]] = {}
    for n, given in enumerate(roots):
        root = given.resolve()
        found = [root] if (root / META).is_file() else _walk(root, root, 1)
        for path in dict.fromkeys(found):
            rel = path.relative_to(root).as_posix()
            run_id = f"{n}/{rel}" if rel != "." else str(n)
            members.setdefault(path.parent, []).append(run_id)
            runs[run_id] = Run(run_id, path, None)
    groups: dict[str, Group] = {}
    for parent, ids in members.items():
        ids = [i for i in ids if "/" in i]  # a given directory that is itself a run is in no group
        if ids:
            gid = "g:" + ids[0].rsplit("/", 1)[0]
            groups[gid] = Group(gid, parent, tuple(ids), (parent / "study.json").is_file())
            for i in ids:
                runs[i] = Run(i, runs[i].path, gid)
    return Catalog(runs, groups)


def _held(lock: Path) -> bool:
    """Whether some live process holds an ``flock`` on ``lock`` (``/proc/locks``; else its pid is alive)."""
    try:
        info = lock.stat()
    except OSError:
        return False
    locks = Path("/proc/locks")
    if locks.exists():
        want = f":{info.st_ino} "
        return any(" FLOCK " in f" {line} " and want in line for line in locks.read_text().splitlines())
    try:
        pid = int(lock.read_text().strip() or "0")
        os.kill(pid, 0)
    except (ValueError, OSError):
        return False
    return pid > 0


def _failed(run: Path) -> bool:
    try:
        metrics = json.loads(read_text(run, "metrics.json"))
    except (LingdiagError, json.JSONDecodeError):
        return False
    return isinstance(metrics, dict) and any(isinstance(m, dict) and m.get(N_ERRORS) for m in metrics.values())


def state(run: Path) -> str:
    """``running``, ``finished``, ``failed`` or ``stale lock`` (see the module's text)."""
    if _held(run / ".lock"):
        return RUNNING
    metrics, items = run / "metrics.json", run / "items.jsonl"
    if metrics.is_file() and (not items.exists() or metrics.stat().st_mtime_ns >= items.stat().st_mtime_ns):
        return FAILED if _failed(run) else FINISHED
    return STALE


def meta(run: Path) -> RunMeta:
    """The run's ``meta.json``, checked as a file of the run first."""
    return RunMeta.read(inside(run, META))
