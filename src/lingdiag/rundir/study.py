"""``study.json``: a study directory's plan and the history of each run's attempts, typed, and
the place of a run directory in its study.

A study directory is ``study.json`` beside ``runs/``, each run at ``runs/<model>/<suite>`` (its
``key``). What ``study.json`` records of a run is its plan (model, suite, language, config) and
its attempts (failures, reasons, seconds); whether the run is finished and current is never read
from here but from the run's own files (``lingdiag.rundir.state``), so a deleted or edited run is
seen as it is. The format lives here, beside the run directory's, so that the viewer and reports
read a study without the study's planner or executor.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lingdiag.config import redact_url_secrets
from lingdiag.errors import RunError, one_line
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.limits import STUDY_STATE_BYTES, read_regular
from lingdiag.rundir.status import Status

STUDY_JSON = "study.json"
RUNS = "runs"
"""The folder of a study directory holding its run directories."""
SCHEMA = 1
_KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*/[A-Za-z0-9_-][A-Za-z0-9._-]*")
"""A run's key: two safe path components (``study.plan.slug``), neither ``.`` nor ``..`` nor hidden."""


class StudyModel(BaseModel):
    """One model of the study as its runs use it: a checkpoint is a model of its own. A planned run
    holds its real spec (what loads it); ``study.json`` holds :meth:`to_json`, the spec without URL
    credentials, read back into the same type.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    """The model's name in the study: every table, note, figure and viewer page names it so."""
    spec: str
    family: str
    n_params: float | None = None
    step: int | None = None
    tokens: float | None = None
    base: str | None = None
    """The model a checkpoint belongs to (its learning curve); None for a plain model."""

    def to_json(self) -> dict[str, Any]:
        """As ``study.json`` holds it."""
        return {"label": self.label, "spec": redact_url_secrets(self.spec), "family": self.family,
                "n_params": self.n_params, "step": self.step, "tokens": self.tokens, "base": self.base}


class Attempts(BaseModel):
    """What the study's attempts at one run left: failures with their reasons, time spent, items
    counted. History, not state: finished and current are the run directory's (``rundir.state``).
    """

    model_config = ConfigDict(extra="forbid")

    status: Literal[Status.PLANNED, Status.DONE, Status.FAILED] = Status.PLANNED
    """How the last attempt ended (read from ``study.json`` as its word)."""
    attempts: int = Field(default=0, ge=0)
    """Sessions that started the run and did not finish it (a failure or a kill counts once)."""
    reason: str | None = None
    """Why the last attempt failed, one line."""
    seconds: float = Field(default=0.0, ge=0)
    """Wall time spent on the run, over every session."""
    items_done: int = Field(default=0, ge=0)
    items_total: int = Field(default=0, ge=0)


class RunEntry(BaseModel):
    """One planned run and its attempts."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """Its directory under ``runs/``: ``model/suite``, never a path out of the study."""
    model: StudyModel
    suite: str
    """The suite's name in the study (with its language where it has one)."""
    language: str | None = None
    config: dict[str, Any]
    state: Attempts = Field(default_factory=Attempts)

    @field_validator("key")
    @classmethod
    def _inside(cls, key: str) -> str:
        if not _KEY.fullmatch(key) or any(part in (".", "..") for part in key.split("/")):
            raise ValueError(f"{key!r} is not a run's place in a study (model/suite, letters, digits, '.', '-', "
                             "'_'); it could name a directory outside the study")
        return key

    @property
    def name(self) -> str:
        """The run's name in the study: ``model × suite``."""
        return f"{self.model.label} × {self.suite}"

    def directory(self, out: Path) -> Path:
        """The run's directory in the study directory ``out``."""
        return Path(out) / RUNS / self.key


class Compared(BaseModel):
    """A comparison the study file names (``compare:``): every model of ``a`` against every model of ``b``,
    by their study names; differences are A − B.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    a: list[str]
    b: list[str]


class StudyState(BaseModel):
    """The whole ``study.json``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA
    name: str
    retries: int = Field(ge=0)
    runs: list[RunEntry]
    compare: list[Compared] = Field(default_factory=list)
    """The comparisons the study file names, for ``study report`` and the viewer (absent: none)."""


def write_state(out: Path, state: StudyState) -> None:
    """Write ``OUT/study.json`` atomically (a study naming no comparison keeps the file as it was)."""
    make_dir(out)
    data = state.model_dump(mode="json", exclude={"compare"} if not state.compare else None)
    write_atomic(Path(out) / STUDY_JSON, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def read_state(out: Path, *, missing_ok: bool = False) -> StudyState | None:
    """``OUT/study.json``, validated (None if absent and ``missing_ok``).

    Raises:
        RunError: not a study directory, a damaged ``study.json``, one of a newer schema, or two
            entries of one run (one line naming the file).
    """
    path = Path(out) / STUDY_JSON
    if not path.exists() and not path.is_symlink() and missing_ok:
        return None
    if not path.exists() and not path.is_symlink():
        raise RunError(f"{out}: not a study directory (no {STUDY_JSON}; `lingdiag study run FILE --out {out}` "
                       "makes one)")
    try:
        data = json.loads(read_regular(path, STUDY_STATE_BYTES).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: damaged ({e}); move it aside and run `lingdiag study run` again "
                       "(finished runs are found from their directories)") from None
    version = data.get("schema_version", SCHEMA) if isinstance(data, dict) else SCHEMA
    if isinstance(version, int) and version > SCHEMA:
        raise RunError(f"{path}, field 'schema_version': {version} is newer than this lingdiag reads ({SCHEMA}); "
                       "read it with the lingdiag that wrote it, or upgrade")
    try:
        state = StudyState.model_validate(data)
    except ValidationError as e:
        raise RunError(one_line(e, path)) from None
    keys = [r.key for r in state.runs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise RunError(f"{path}, field 'runs': run {twice[0]!r} is listed twice")
    return state


@dataclass(frozen=True, slots=True)
class Place:
    """Where a run directory sits in a study: the study and the run's entry in it."""

    study: Path
    entry: RunEntry


def place_of(run_dir: Path) -> Place | None:
    """The study entry of ``run_dir`` if it is a study's run (``STUDY/runs/model/suite``, listed in
    ``STUDY/study.json``); None for a run outside a study (or one its study does not list).

    Raises:
        RunError: the study's ``study.json`` is damaged.
    """
    run_dir = Path(run_dir)
    study = run_dir.parent.parent.parent
    if run_dir.parent.parent.name != RUNS or not (study / STUDY_JSON).exists():
        return None
    return _places(study).get(f"{run_dir.parent.name}/{run_dir.name}")


_PLACES: dict[Path, tuple[tuple[int, int, int], dict[str, Place]]] = {}
"""A study's places by run key, kept while its ``study.json`` is unchanged: a reader of a study of thousands
of runs asks once per run, and ``study.json`` lists them all."""


def _places(study: Path) -> dict[str, Place]:
    """Run key → its place, from ``study``'s ``study.json`` as it is now.

    Raises:
        RunError: ``study.json`` is damaged.
    """
    try:
        info = os.stat(study / STUDY_JSON)
        version = (info.st_ino, info.st_size, info.st_mtime_ns)
    except OSError:
        version = (0, 0, 0)
    known = _PLACES.get(study)
    if known is not None and known[0] == version:
        return known[1]
    state = read_state(study)
    places = {r.key: Place(study, r.model_copy(deep=True)) for r in state.runs} if state else {}
    _PLACES[study] = (version, places)
    return places
