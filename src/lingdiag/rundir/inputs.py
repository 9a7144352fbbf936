"""What a run was computed from, and what of it changed since: the one comparison behind resume's
refusals and a run's ``current`` (``lingdiag.rundir.state``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.io.paths import sha256_file
from lingdiag.rundir.meta import RunMeta

RESUMABLE_CHANGES = ("batch_tokens",)
"""Config fields a run may change between sessions: they group requests into batches, nothing more."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str] = ()) -> list[str]:
    """The config fields (as in ``meta.json``) that differ between two runs, sorted; ``ignore`` excepted."""
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a run should have been computed from, as a caller plans it now (resume, a study).

    A field left None is checked against the files themselves instead: each file the run records
    is re-hashed where it still is.
    """

    config: Mapping[str, Any] | None = None
    """The configuration as ``meta.json`` records it (``RunConfig.recorded()``)."""
    sources: Mapping[str, str] | None = None
    """Every file the run reads → its SHA-256 now (``Plan.sources()``: the data, an expander's files)."""
    suite_file: str | None = None
    """The suite file's SHA-256 now; ``""`` for a registered suite (no file); None: re-hash the path."""


@dataclass(frozen=True, slots=True)
class Change:
    """One input that is not what the run was computed from."""

    kind: str
    """``config``, ``data``, ``suite_file`` or ``records`` (``items.jsonl`` edited after the run finished)."""
    what: str
    """The fields or files that changed."""

    @property
    def line(self) -> str:
        """One line saying what changed."""
        match self.kind:
            case "config":
                return f"its configuration differs in: {self.what}"
            case "data":
                return f"{self.what} changed since it ran (SHA-256)"
            case "records":
                return f"items.jsonl changed since the run finished ({self.what} then)"
            case _:
                return f"suite file {self.what} changed since it ran (SHA-256)"


def drift(meta: RunMeta, inputs: Inputs) -> tuple[tuple[Change, ...], tuple[str, ...]]:
    """What changed since the run of ``meta`` (its configuration, data files, suite file), and the
    recorded files that could not be checked (gone).
    """
    changes: list[Change] = []
    unchecked: list[str] = []
    if inputs.config is not None:
        changed = config_changes(meta.config, inputs.config, RESUMABLE_CHANGES)
        if changed:
            changes.append(Change("config", ", ".join(changed)))
    before = dict(meta.checksums or {})
    if inputs.sources is not None:
        now = dict(inputs.sources)
        # An empty checksum (runs from before user files were hashed) cannot be compared.
        data = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k) and before.get(k) != "")
    else:
        data = []
        for name, sha in sorted(before.items()):
            if not _SHA256.fullmatch(sha):  # a built-in dataset is named, not hashed
                continue
            now_sha = _hash(Path(name))
            if now_sha is None:
                unchecked.append(name)
            elif now_sha != sha:
                data.append(name)
    if data:
        changes.append(Change("data", ", ".join(data)))
    recorded = meta.suite_file.sha256 if meta.suite_file else ""
    if inputs.suite_file is not None:
        if inputs.suite_file != recorded:
            changes.append(Change("suite_file", meta.suite_file.path if meta.suite_file else "(none then)"))
    elif meta.suite_file is not None:
        now_sha = _hash(Path(meta.suite_file.path))
        if now_sha is None:
            unchecked.append(meta.suite_file.path)
        elif now_sha != recorded:
            changes.append(Change("suite_file", meta.suite_file.path))
    return tuple(changes), tuple(unchecked)


_HASHED: dict[tuple[str, int, int], str] = {}
"""A file's SHA-256 by (path, size, mtime): many runs of one study read one data file."""


def _hash(path: Path) -> str | None:
    try:
        info = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return None
    key = (str(path.resolve()), info.st_size, info.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = sha256_file(path)
    return _HASHED[key]
