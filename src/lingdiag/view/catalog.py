"""The runs and groups under the directories ``lingdiag view`` was given, and each run's state.

A run is a directory holding ``meta.json``; a group (a study) is a directory holding runs, with or
without the ``study.json`` the study command writes. Directories are walked without following a
symlink out of the given ones: every path is resolved and kept only inside a given root.

A run's state is its directory's own answer (``lingdiag.rundir.state``): running, stopped, finished,
failed (finished with failed items), stale (its data or suite file changed since) or unreadable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lingdiag.rundir import META, RunMeta
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


def meta(run: Path) -> RunMeta:
    """The run's ``meta.json``, checked as a file of the run first."""
    return RunMeta.read(inside(run, META))
