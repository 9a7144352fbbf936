"""The installed environment beside lingdiag's tested lock: package versions, the torch build,
the devices torch can see and the threads it will use.

The lock (``constraints.txt``, shipped in the package) holds the exact versions that `make
install` and CI install and test, resolved by ``make lock``. A run records whether its
versions match it, so a number compared with a published row says which environment made it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

LOCK_FILE = "constraints.txt"
"""The lock's name inside the ``lingdiag`` package."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")

DEV_EXTRA = "dev"
"""The extra whose packages (test and lint tools) never change a number."""

MAKEFILE_PINS = ("torch",)
"""Installed by the Makefile before lingdiag (so never a CUDA build), not declared by lingdiag."""


@cache
def lock() -> Mapping[str, str]:
    """Canonical package name → locked version, from the shipped lock."""
    text = resources.files("lingdiag").joinpath(LOCK_FILE).read_text(encoding="utf-8")
    return parse_lock(text.splitlines())


def parse_lock(lines: Iterable[str]) -> dict[str, str]:
    """``name==version`` lines of a pip-compile output (comments and options skipped)."""
    pins: dict[str, str] = {}
    for line in lines:
        m = _PIN.match(line.strip())
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def installed_version(name: str) -> str | None:
    """The installed distribution's version, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def same_version(a: str, b: str) -> bool:
    """Equal as PEP 440 versions (``1.0`` == ``1.0.0``), else as text."""
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


@dataclass(frozen=True, slots=True)
class Pin:
    """One locked package and what is installed."""

    name: str
    locked: str
    installed: str | None

    @property
    def matches(self) -> bool:
        """Installed at exactly the locked version."""
        return self.installed is not None and same_version(self.installed, self.locked)


def pins(names: Iterable[str] | None = None, locked: Mapping[str, str] | None = None) -> list[Pin]:
    """Every package of ``locked`` (default: the shipped lock), or those of ``names`` it holds, sorted by name."""
    locked = lock() if locked is None else locked
    wanted = sorted(locked) if names is None else sorted({canonicalize_name(n) for n in names} & set(locked))
    return [Pin(n, locked[n], installed_version(n)) for n in wanted]


def _requirements(dist: str, extras: Iterable[str]) -> list[Requirement]:
    """``dist``'s requirements that apply here with ``extras`` selected (markers evaluated)."""
    try:
        raw = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for text in raw:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        marker: Marker | None = req.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in ("", *extras)):
            out.append(req)
    return out


def runtime_packages() -> set[str]:
    """The installed packages a run can depend on: lingdiag's requirements with every extra
    but the dev tools, followed through each installed package's own requirements, plus
    the packages the Makefile installs for it (torch).
    """
    try:
        extras = [e for e in (metadata.metadata("lingdiag").get_all("Provides-Extra") or []) if e != DEV_EXTRA]
    except metadata.PackageNotFoundError:
        extras = []
    seen: set[str] = set()
    todo = [canonicalize_name(r.name) for r in _requirements("lingdiag", extras)] + list(MAKEFILE_PINS)
    while todo:
        name = todo.pop()
        if name in seen or installed_version(name) is None:
            continue
        seen.add(name)
        todo += [canonicalize_name(r.name) for r in _requirements(name, ())]
    return seen


@dataclass(frozen=True, slots=True)
class LockStatus:
    """How a run's installed packages compare with the lock."""

    differs: tuple[Pin, ...]
    """Installed runtime packages whose version is not the locked one."""
    unlocked: tuple[str, ...]
    """Installed runtime packages the lock does not name."""

    @property
    def matches(self) -> bool:
        """Every installed runtime package is at its locked version."""
        return not self.differs and not self.unlocked

    def recorded(self) -> dict[str, Any]:
        """``meta.json``'s ``lock`` entry."""
        return {"matches": self.matches,
                "differs": {p.name: {"installed": p.installed, "locked": p.locked} for p in self.differs},
                "unlocked": list(self.unlocked)}

    def line(self) -> str | None:
        """One line for the terminal when the versions differ from the lock; None when they match."""
        if self.matches:
            return None
        parts = [f"{p.name} {p.installed} (lock {p.locked})" for p in self.differs]
        parts += [f"{n} (not in the lock)" for n in self.unlocked]
        return ("package versions differ from lingdiag's tested lock, so numbers may differ from "
                "locked runs: " + ", ".join(parts))


def lock_status(locked: Mapping[str, str] | None = None) -> LockStatus:
    """How the installed runtime packages compare with ``locked`` (default: the shipped lock)."""
    runtime = runtime_packages()
    locked = lock() if locked is None else locked
    return LockStatus(differs=tuple(p for p in pins(runtime, locked) if not p.matches),
                      unlocked=tuple(sorted(n for n in runtime if n not in locked)))


@dataclass(frozen=True, slots=True)
class TorchBuild:
    """The torch build and what it can use."""

    version: str
    cuda: str | None
    """The CUDA version torch was built with; None for a CPU build."""
    devices: tuple[str, ...]
    """``cpu`` and each visible CUDA device with its name."""
    threads: int
    """Intra-op threads torch will use."""
    onednn: bool


def usable_cpus() -> int:
    """The CPUs this process may run on (a SLURM allocation or taskset, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def torch_build() -> TorchBuild:
    """The installed torch; raises ImportError where it is missing."""
    import torch

    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{k} ({torch.cuda.get_device_name(k)})" for k in range(torch.cuda.device_count())]
    return TorchBuild(version=torch.__version__, cuda=torch.version.cuda, devices=tuple(devices),
                      threads=torch.get_num_threads(),
                      onednn=bool(torch.backends.mkldnn.is_available()))  # type: ignore[no-untyped-call]
