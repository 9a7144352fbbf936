"""What a run was computed from, and what of it changed since: the one comparison behind resume's
refusals and a run's ``current`` (``lingdiag.rundir.state``).

A run records each file it read (``meta.json``'s ``dataset`` and ``suite_file``) by **where** and
**what**:

- where: the path resolved when the run started, relative to the run directory where the file lies
  inside the run's home (its study directory for a study's run, else the run directory itself),
  absolute otherwise; and ``origin``, the run directory's own absolute path then. A run read from
  any current directory finds its files; a run whose directory moved (a study copied or synced to
  another path) looks first at the same place relative to where the run directory is now.
- what: the content identity of what was read (``lingdiag.io.content``): the parsed suite, the data
  rows, every file of a dataset folder; not the bytes. A comment or a blank line changes nothing, a
  row or a file added to the folder does.

The configuration is compared field by field, but for the fields that name files (the suite file,
the dataset path), whose *content* is compared instead, so that a moved or copied input is the same
input; and but for the transport settings (``lingdiag.config.TRANSPORT``), which change how answers
are fetched, never what they are, and may change between attempts.

Runs written before these identities existed recorded paths as given (relative to the current
directory then) and byte SHA-256s: they are checked as they were, byte for byte.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.config import TRANSPORT, answer_config, names_path
from lingdiag.io.content import content_id, is_content
from lingdiag.io.paths import sha256_file
from lingdiag.rundir.meta import RunMeta
from lingdiag.rundir.study import RUNS, STUDY_JSON

RESUMABLE_CHANGES = TRANSPORT
"""Config fields (and, under ``model_options``, provider options) a run may change between sessions:
they fetch the same answers otherwise (batching, timeouts, retries, concurrency, threads)."""
LOCATED = ("suite", "dataset")
"""Config fields that may name a file, whose content (not their path) says whether the run is the same."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str] = ()) -> list[str]:
    """The config fields (as in ``meta.json``) that differ between two runs, sorted; ``ignore`` excepted."""
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


def answer_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The config fields that differ in what changes answers: transport settings left out, and a suite
    or dataset named by a path on both sides left out (their content is compared, not where they are).
    """
    located = [k for k in LOCATED if names_path(old.get(k)) and names_path(new.get(k))]
    return config_changes(answer_config(old), answer_config(new), located)


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a run should have been computed from, as a caller plans it now (resume, a study).

    A field left None is checked against the files themselves instead: each file the run records
    is read again where it is now.
    """

    config: Mapping[str, Any] | None = None
    """The configuration as ``meta.json`` records it (``RunConfig.recorded()``)."""
    sources: Mapping[str, str] | None = None
    """Every file the run reads (as the caller names it: absolute, or relative to the current directory)
    → its identity now (``Plan.sources()``: the data, a dataset folder, an expander's files)."""
    suite_file: str | None = None
    """The suite file's content identity now; ``""`` for a registered suite (no file); None: read it again."""
    suite_sha256: str = ""
    """The suite file's byte SHA-256 now, compared with runs that recorded no content identity."""


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


def home(run_dir: Path) -> Path:
    """Where a run's inputs are recorded relative to it: its study directory for a study's run
    (``STUDY/runs/model/suite`` beside ``STUDY/study.json``), else the run directory itself.
    """
    run_dir = Path(run_dir).resolve()
    study = run_dir.parent.parent.parent
    if run_dir.parent.parent.name == RUNS and (study / STUDY_JSON).is_file():
        return study
    return run_dir


def recorded_path(path: str | Path, run_dir: Path) -> str:
    """``path`` (relative to the current directory, or absolute) as ``meta.json`` records it: resolved now,
    relative to ``run_dir`` where it lies inside the run's :func:`home`, absolute otherwise.
    """
    resolved = Path(path).resolve()
    run = Path(run_dir).resolve()
    if resolved.is_relative_to(home(run)):
        return os.path.relpath(resolved, run)
    return str(resolved)


def located(meta: RunMeta, name: str, run_dir: Path | None = None) -> Path:
    """Where the file a run recorded as ``name`` is now: relative names against the run directory (against
    the current directory in runs written before ``origin`` was recorded); an absolute one at the same
    place relative to the run directory if the directory moved and the file is there, else where it was.
    """
    where = Path(run_dir) if run_dir is not None else (meta.source.parent if meta.source else None)
    path = Path(name)
    if meta.origin is None or where is None:
        return path
    if not path.is_absolute():
        return Path(os.path.normpath(where.resolve() / path))
    now = where.resolve()
    if now != Path(meta.origin):
        moved = Path(os.path.normpath(now / os.path.relpath(path, meta.origin)))
        if moved.exists():
            return moved
    return path


def rebased(meta: RunMeta, then: Path, now: Path) -> RunMeta:
    """``meta`` of the run directory ``then`` as the run directory ``now`` records it (a merge writes its
    first shard's inputs into the merged run): each file it read recorded relative to ``now``, its origin ``now``.
    """
    if meta.origin is None:
        return meta
    files = {recorded_path(located(meta, k, then), now) if identifies_file(v) else k: v
             for k, v in (meta.checksums or {}).items()}
    suite = meta.suite_file
    moved = None if suite is None else suite.model_copy(update={"path": recorded_path(located(meta, suite.path, then),
                                                                                       now)})
    return meta.replaced(checksums=files, suite_file=moved, origin=str(Path(now).resolve()))


def _now(meta: RunMeta, name: str, recorded: str) -> str | None:
    """The identity of the file recorded as ``name`` now, of the kind recorded (content or bytes)."""
    path = located(meta, name)
    return content_id(path) if is_content(recorded) else _bytes(path)


def _data_changes(meta: RunMeta, inputs: Inputs) -> tuple[list[str], list[str]]:
    """The recorded data files that changed, and those that could not be checked."""
    before = dict(meta.checksums or {})
    changed: list[str] = []
    unchecked: list[str] = []
    if inputs.sources is None:
        for name, recorded in sorted(before.items()):
            if not (is_content(recorded) or _SHA256.fullmatch(recorded)):  # a built-in dataset is named, not hashed
                continue
            now = _now(meta, name, recorded)
            if now is None:
                unchecked.append(name)
            elif now != recorded:
                changed.append(name)
        return changed, unchecked
    given = dict(inputs.sources)
    # A file is matched by where it is (its recorded name resolved); a source no file answers to (an hf: dataset,
    # a built-in's name) by its name.
    then_at = {k: k for k in before} | {_place(meta, k, v): k for k, v in before.items()}
    changed_now: list[str] = []
    read_now: Counter[str] = Counter()
    by_content: list[str] = []
    matched: set[str] = set()
    for key, value in given.items():
        old = then_at.get(_place(None, key, value), then_at.get(key))
        then = before[old] if old is not None else None
        if old is not None:
            matched.add(old)
        if then is not None and not is_content(then):
            # Byte SHA-256s (older runs, pinned official files) and names compare file by file, as then.
            same = then in ("", value) or (bool(_SHA256.fullmatch(then)) and is_content(value)
                                                and _bytes(Path(key)) == then)
            if not same:
                changed_now.append(key)
        elif is_content(value):
            read_now[value] += 1
            by_content.append(key)
        elif then is None or then != value:
            changed_now.append(key)
    # What was read, wherever it lies now: content identities compare as a whole, whatever the paths.
    read_then = Counter(v for v in before.values() if is_content(v))
    changed = [k for k, v in before.items() if is_content(v) and read_now[v] < read_then[v]]
    changed += [k for k in by_content if read_then[given[k]] < read_now[given[k]]]
    changed += [k for k, v in before.items() if k not in matched and not is_content(v) and v != ""]
    return sorted({*changed, *changed_now}), unchecked


def identifies_file(value: str) -> bool:
    """Whether a recorded ``dataset`` value identifies a file's content (a content identity, a byte SHA-256,
    or ``""`` for a file recorded unhashed by older runs), not a built-in dataset's name.
    """
    return value == "" or is_content(value) or bool(_SHA256.fullmatch(value))


def _bytes(path: Path) -> str | None:
    try:
        return sha256_file(path) if path.is_file() else None
    except OSError:
        return None


def _place(meta: RunMeta | None, name: str, value: str) -> str:
    """A recorded (``meta``) or given file name as a place to compare by: the absolute path of a file;
    a name no file answers to (``builtin``, an ``hf:`` dataset) as it is.
    """
    if not identifies_file(value) or (value == "" and meta is not None and meta.origin is not None):
        return name  # a name, or a source recorded unhashed because no file answers to it
    path = located(meta, name) if meta is not None else Path(name)
    return os.path.abspath(path)


def drift(meta: RunMeta, inputs: Inputs) -> tuple[tuple[Change, ...], tuple[str, ...]]:
    """What changed since the run of ``meta`` (its configuration, data files, suite file), and the
    recorded files that could not be checked (gone).
    """
    changes: list[Change] = []
    if inputs.config is not None:
        changed = answer_changes(meta.config, inputs.config)
        if changed:
            changes.append(Change("config", ", ".join(changed)))
    data, unchecked = _data_changes(meta, inputs)
    if data:
        changes.append(Change("data", ", ".join(data)))
    suite = meta.suite_file
    if inputs.suite_file is not None:
        recorded = (suite.content or suite.sha256) if suite else ""
        now = inputs.suite_file if (suite is None or suite.content) else inputs.suite_sha256
        if now != recorded:
            changes.append(Change("suite_file", suite.path if suite else "(none then)"))
    elif suite is not None:
        now_id = _now(meta, suite.path, suite.content or suite.sha256)
        if now_id is None:
            unchecked.append(suite.path)
        elif now_id != (suite.content or suite.sha256):
            changes.append(Change("suite_file", suite.path))
    return tuple(changes), tuple(unchecked)
