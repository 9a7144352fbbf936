"""``study.json``: the study's plan and each run's state, the one file ``status`` and ``report``
read (the study file may have moved since). Written atomically after every change of state.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lingdiag.errors import RunError, one_line
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.rundir import config_changes
from lingdiag.study.plan import RUNS, PlannedRun, StudyModel

STUDY_JSON = "study.json"
MAX_STATE_BYTES = 64_000_000
"""Largest ``study.json`` read (tens of thousands of runs)."""
SCHEMA = 1


class RunState(BaseModel):
    """Where one run stands."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["planned", "done", "failed"] = "planned"
    attempts: int = Field(default=0, ge=0)
    """Sessions that started the run and did not finish it (a failure or a kill counts once)."""
    reason: str | None = None
    """Why the last attempt failed, one line."""
    seconds: float = Field(default=0.0, ge=0)
    """Wall time spent on the run, over every session."""
    items_done: int = Field(default=0, ge=0)
    items_total: int = Field(default=0, ge=0)


class RunEntry(BaseModel):
    """One planned run and its state."""

    model_config = ConfigDict(extra="forbid")

    key: str
    model: StudyModel
    suite: str
    language: str | None = None
    config: dict[str, Any]
    state: RunState = Field(default_factory=RunState)

    def directory(self, out: Path) -> Path:
        """The run's directory in the study directory ``out``."""
        return Path(out) / RUNS / self.key


class StudyState(BaseModel):
    """The whole ``study.json``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA
    name: str
    retries: int = Field(ge=0)
    runs: list[RunEntry]


def merged(name: str, retries: int, planned: Sequence[PlannedRun], old: StudyState | None) -> StudyState:
    """The state of a (re)planned study: each run keeps the state ``old`` has for it.

    Raises:
        RunError: a run already in the study directory was planned with another configuration.
    """
    before = {r.key: r for r in old.runs} if old else {}
    runs = []
    for p in planned:
        entry = RunEntry.model_validate(p.to_json())
        if p.key in before:
            changed = config_changes(before[p.key].config, entry.config)
            if changed:
                raise RunError(f"run {p.key!r} of the study directory was planned with another configuration "
                               f"(differs in: {', '.join(changed)}); use another --out directory")
            entry.state = before[p.key].state
        runs.append(entry)
    return StudyState(name=name, retries=retries, runs=runs)


def write_state(out: Path, state: StudyState) -> None:
    """Write ``OUT/study.json`` atomically."""
    make_dir(out)
    write_atomic(Path(out) / STUDY_JSON, json.dumps(state.model_dump(mode="json"), indent=1, ensure_ascii=False,
                                                    sort_keys=True) + "\n")


def read_state(out: Path, *, missing_ok: bool = False) -> StudyState | None:
    """``OUT/study.json``, validated (None if absent and ``missing_ok``).

    Raises:
        RunError: not a study directory, or a damaged ``study.json`` (one line naming the file).
    """
    path = Path(out) / STUDY_JSON
    if not path.exists() and missing_ok:
        return None
    if not path.is_file():
        raise RunError(f"{out}: not a study directory (no {STUDY_JSON}; `lingdiag study run FILE --out {out}` "
                       "makes one)")
    if path.stat().st_size > MAX_STATE_BYTES:
        raise RunError(f"{path}: larger than {MAX_STATE_BYTES} bytes; not a study.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: damaged ({e}); move it aside and run `lingdiag study run` again "
                       "(finished runs are found from their directories)") from None
    try:
        return StudyState.model_validate(data)
    except ValidationError as e:
        raise RunError(one_line(e, path)) from None
