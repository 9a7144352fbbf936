"""The runs and groups under the directories ``lingdiag view`` was given, and each run's state.

A run is a directory holding ``meta.json``; a group is a directory holding runs. A study (the
``study.json`` the study command writes, its runs at ``runs/MODEL/SUITE``) is one group, whatever
folders its runs sit in; any other directory holding runs is a group of its own. Directories are
walked without following a symlink out of the given ones: every path is resolved and kept only
inside a given root.

A run's state is its directory's own answer (``lingdiag.rundir.state``): running, stopped, finished,
failed (finished with failed items), stale (its data or suite file changed since), unchecked (a file it
read is gone, so whether it is current cannot be said) or unreadable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lingdiag.rundir import META, RunMeta
from lingdiag.rundir.study import RUNS, STUDY_JSON
from lingdiag.view.files import inside

MAX_DEPTH = 4
"""Directory levels below a given directory searched for runs."""


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
    """It holds a ``study.json`` (read as a study where it is one: ``lingdiag.view.study``)."""


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


def _study_of(run: Path, root: Path) -> Path | None:
    """The study directory holding ``run`` at ``runs/MODEL/SUITE``, if there is one inside ``root``."""
    study = run.parent.parent.parent
    if run.parent.parent.name == RUNS and study.is_relative_to(root) and (study / STUDY_JSON).is_file():
        return study
    return None


def catalog(roots: list[Path]) -> Catalog:
    """The runs and groups under ``roots`` (a root may itself be a run, or a study)."""
    runs: dict[str, Run] = {}
    members: dict[tuple[str, Path], list[str]] = {}
    for n, given in enumerate(roots):
        root = given.resolve()
        found = [root] if (root / META).is_file() else _walk(root, root, 1)
        for path in dict.fromkeys(found):
            rel = path.relative_to(root).as_posix()
            run_id = f"{n}/{rel}" if rel != "." else str(n)
            runs[run_id] = Run(run_id, path, None)
            if rel == ".":  # a given directory that is itself a run is in no group
                continue
            holder = _study_of(path, root) or path.parent
            place = holder.relative_to(root).as_posix()
            members.setdefault((f"{n}/{place}" if place != "." else str(n), holder), []).append(run_id)
    groups: dict[str, Group] = {}
    for (name, holder), ids in members.items():
        gid = "g:" + name
        groups[gid] = Group(gid, holder, tuple(ids), (holder / STUDY_JSON).is_file())
        for i in ids:
            runs[i] = Run(i, runs[i].path, gid)
    return Catalog(runs, groups)


def meta(run: Path) -> RunMeta:
    """The run's ``meta.json``, checked as a file of the run first."""
    return RunMeta.read(inside(run, META))
