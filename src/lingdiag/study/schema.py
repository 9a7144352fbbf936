"""The study file: models (with family, size and checkpoints), suites with their axes, datasets
and languages, the run options every run takes (``run:``), the comparisons a researcher chooses
(``compare:``), retries and where the runs go. Validated with ``extra="forbid"``; every error is
one line naming the file and the field.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from lingdiag.config import RunConfig, axis_values, load_config_yaml, redact_url_secrets
from lingdiag.errors import ConfigError, one_line

MAX_STUDY_BYTES = 1_000_000
"""Largest study file read (a study of hundreds of models is a few kilobytes)."""
MAX_RETRIES = 10
"""The most times a failed run may be retried (a bound, so that a broken model cannot loop)."""
LANGUAGE = "{language}"
"""Written in a suite's dataset (or suite file) path, replaced by each of its ``languages``."""

STUDY_SETS = ("suite", "model", "dataset", "axes", "options", "limit", "seed", "model_options", "items", "shard",
              "shard_base_urls")
"""The fields of a run's configuration the study file sets by its own keys (or, for shards, never);
every other field of ``RunConfig`` is a run option (``run:``)."""
_SPEC = re.compile(r"^(?P<kind>[A-Za-z][A-Za-z0-9_-]+):(?P<rest>.+)$")
"""``FORMAT:PATH`` (``clams:data/de``): a reader's name before a path (two letters at least, so a
Windows drive letter is a path)."""
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
MAX_PARAMETERS = 1e15
"""The largest size a study takes (hundreds of times the largest model trained): past it, a size is
a typo (``1e400`` read as infinity, ``135000T``) that would draw the scaling axis and order neighbours."""


def checked_size(value: float) -> float:
    """``value`` as a number of parameters: positive, finite and at most ``MAX_PARAMETERS``.

    Raises:
        ValueError: what is wrong with it, for the one-line error naming the field.
    """
    if not math.isfinite(value) or not 0 < value <= MAX_PARAMETERS:
        raise ValueError(f"a size is a positive, finite number of parameters up to {MAX_PARAMETERS:g}; "
                         f"{value:g} is not")
    return float(value)


def parse_size(value: Any) -> float:
    """``135M``, ``1.7B``, ``3e8`` or a number → parameters (see :func:`checked_size`)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_PARAMETERS:
        value = math.inf if value > 0 else -math.inf  # float() of a 400-digit integer overflows
    if isinstance(value, int | float) and not isinstance(value, bool):
        return checked_size(float(value))
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m:
            return checked_size(float(m.group(1)) * _SCALE[m.group(2).lower()])
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return checked_size(number)
    raise ValueError("a size is a number of parameters such as 135M, 1.7B or 360000000")


_RUN_FIELDS: dict[str, Any] = {name: (field.annotation, field) for name, field in RunConfig.model_fields.items()
                               if name not in STUDY_SETS}
RunOptions: type[BaseModel] = create_model("RunOptions", __config__=ConfigDict(extra="forbid", frozen=True),
                                           **_RUN_FIELDS)
"""The options of one run that a study passes on (``per_token``, ``chunk_items``, ``batch_tokens``,
``think_tags``, ``after_thinking``, ``trust_remote_code``...): ``RunConfig``'s own fields, less those
the study sets itself (``STUDY_SETS``), so a new run option reaches studies without an edit here.
Given at the study's top level, a model's or a suite's (``run: {per_token: true}``); a model's
override the study's and a suite's override both."""


def run_options(*layers: BaseModel) -> dict[str, Any]:
    """The options set in ``layers`` (each a ``RunOptions``), a later layer's over an earlier one's."""
    out: dict[str, Any] = {}
    for layer in layers:
        out |= layer.model_dump(exclude_unset=True)
    return out


class Checkpoint(BaseModel):
    """One training checkpoint of a model: a spec (``hf:ID@REVISION``) or a local directory, with
    where in training it was saved.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str | None = None
    """A model spec, e.g. ``hf:EleutherAI/pythia-160m@step1000``."""
    path: str | None = None
    """A local checkpoint directory (``save_pretrained``), relative to the study file."""
    step: int | None = Field(default=None, ge=0)
    tokens: float | None = Field(default=None, ge=0)
    """Training tokens seen at this checkpoint."""

    @model_validator(mode="after")
    def _one_source(self) -> Checkpoint:
        if (self.spec is None) == (self.path is None):
            raise ValueError("a checkpoint names exactly one of spec or path")
        if self.step is None and self.tokens is None:
            raise ValueError("a checkpoint needs its step or tokens (where in training it was saved)")
        return self

    def label(self, model: str) -> str:
        """The checkpoint's name in the study: ``MODEL@stepN`` (or ``MODEL@Ntok``)."""
        if self.step is not None:
            return f"{model}@step{self.step}"
        assert self.tokens is not None
        t, short = self.tokens, f"{self.tokens:g}"  # every digit where the short form would name two alike
        return f"{model}@{short if float(short) == t else str(int(t)) if t.is_integer() else repr(t)}tok"


class ModelEntry(BaseModel):
    """One model, or one model's checkpoints (each a run of every suite)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str | None = None
    """The model spec (``smollm2-135m``, ``hf:ID[@REVISION]``, ``gguf:FILE``, ``openai:NAME``)."""
    name: str | None = None
    """The model's name in the study (default: its spec)."""
    family: str | None = None
    """The family the scaling figure groups it with (default: its name)."""
    size: float | None = None
    """Parameters (``135M``, ``1.7B`` or a number), for the scaling figure and adjacent-size tests."""
    n_params: float | None = Field(default=None, gt=0)
    """The same as ``size``, as a number."""
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider options (``model_options`` of each run)."""
    run: RunOptions = Field(default_factory=RunOptions)  # type: ignore[valid-type]
    """Run options of this model's runs (``batch_tokens``, ``trust_remote_code``...)."""

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        return None if value is None else parse_size(value)

    @field_validator("n_params", mode="before")
    @classmethod
    def _n_params(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's yes/true would be read as one parameter
            raise ValueError(f"n_params is a number of parameters; {str(value).lower()} is not")
        return value

    @field_validator("n_params")
    @classmethod
    def _n_params_size(cls, value: float | None) -> float | None:
        return None if value is None else checked_size(value)

    @model_validator(mode="after")
    def _named(self) -> ModelEntry:
        if self.spec is None and not self.checkpoints:
            raise ValueError("a model needs a spec or checkpoints")
        if self.spec is None and self.name is None:
            raise ValueError("a model given only by checkpoints needs a name")
        if self.size is not None and self.n_params is not None:
            raise ValueError("give size or n_params, not both")
        self._one_training_axis()
        return self

    def _one_training_axis(self) -> None:
        """A model's checkpoints are ordered along one axis: each gives a step, or none does and each gives
        tokens. A curve ordered by two (steps here, tokens there) is in no order at all, and its findings
        ("not stable after step 500") would name checkpoints out of place.
        """
        axis = self.training_axis
        if axis is None:
            return
        stepless = [k for k, c in enumerate(self.checkpoints) if c.step is None]
        if axis == "step" and stepless:
            stepped = next(k for k, c in enumerate(self.checkpoints) if c.step is not None)
            raise ValueError(f"checkpoints[{stepless[0]}] gives tokens but no step, and checkpoints[{stepped}] a step: "
                             "a model's checkpoints are ordered by one axis; give each a step, or none a step")
        at: dict[float, int] = {}
        for k, c in enumerate(self.checkpoints):
            place = c.step if axis == "step" else c.tokens
            assert place is not None
            if place in at:
                raise ValueError(f"checkpoints[{at[place]}] and checkpoints[{k}] are both at {axis} {place:g}")
            at[place] = k
        both = sorted((c.step, c.tokens) for c in self.checkpoints if c.step is not None and c.tokens is not None)
        for (s1, t1), (s2, t2) in zip(both, both[1:], strict=False):
            if t2 < t1:
                raise ValueError(f"step {s2} gives fewer tokens ({t2:g}) than step {s1} ({t1:g}); "
                                 "training order is one order")

    @property
    def training_axis(self) -> Literal["step", "tokens"] | None:
        """What orders this model's checkpoints: ``step`` where any gives one (then all must), else
        ``tokens``; None without checkpoints.
        """
        if not self.checkpoints:
            return None
        return "step" if any(c.step is not None for c in self.checkpoints) else "tokens"

    @property
    def label(self) -> str:
        """The model's name in the study (a spec's URL credentials never: it names directories)."""
        return self.name or redact_url_secrets(str(self.spec))

    @property
    def labels(self) -> list[str]:
        """The study names of this entry's models: its own (with a spec) and each checkpoint's."""
        return [self.label] * (self.spec is not None) + [c.label(self.label) for c in self.checkpoints]

    @property
    def parameters(self) -> float | None:
        """The size given, if any."""
        return self.size if self.size is not None else self.n_params


class SuiteEntry(BaseModel):
    """One suite (a registered name or a suite file) with its axes, data, options and languages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    name: str | None = None
    """The suite's name in the study (default: the suite and the dataset's file name)."""
    dataset: str = "builtin"
    axes: dict[str, list[str]] = Field(default_factory=dict)
    """Axis values, e.g. ``{strategy: zero-shot}``, ``{strategy: [zero-shot, cot]}`` or ``{temperature: [0, 0.7]}``
    (numbers as their digits: each axis reads its own values)."""
    options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1)
    """Items per condition (default: the study's ``limit``)."""
    languages: list[str] = Field(default_factory=list)
    """One run per language, ``{language}`` in ``dataset`` (or ``suite``) replaced by each."""
    items: str | None = None
    """Run only these items: an anchors file of ``lingdiag items anchors`` or one id per line (relative to
    the study file)."""
    run: RunOptions = Field(default_factory=RunOptions)  # type: ignore[valid-type]
    """Run options of this suite's runs (``per_token``...)."""

    @field_validator("axes", mode="before")
    @classmethod
    def _axis_lists(cls, value: Any) -> Any:
        return axis_values(value)

    @model_validator(mode="after")
    def _languages(self) -> SuiteEntry:
        placed = LANGUAGE in self.dataset or LANGUAGE in self.suite
        if self.languages and not placed:
            raise ValueError(f"languages are given but neither dataset nor suite holds {LANGUAGE}")
        if placed and not self.languages:
            raise ValueError(f"{LANGUAGE} in the path needs languages: [...]")
        if len(set(self.languages)) != len(self.languages):
            raise ValueError("a language is listed twice")
        return self


class Where(BaseModel):
    """Where the runs go: here, or as jobs through ``lingdiag submit``'s executors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    executor: Literal["here", "local", "slurm", "ray"] = "here"
    """``here``: in this process, one model load for all of its suites; ``local``, ``slurm``,
    ``ray``: one job per run through ``lingdiag.cluster.submit``'s executors."""
    cpus_per_task: int = Field(default=1, ge=1)
    gpus_per_task: int = Field(default=0, ge=0)
    time_min: int = Field(default=24 * 60, ge=1)
    partition: str | None = None
    python: str | None = None
    address: str | None = None


class Comparison(BaseModel):
    """Two models (or two groups of models) the researcher chose to compare on every suite both ran:
    ``[A, B]`` by their study names, or ``{a: [...], b: [...], name: ...}`` for groups (every model of
    ``a`` against every model of ``b``). A is the first: differences are A − B, as ``lingdiag compare A B``
    prints them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    a: list[str] = Field(min_length=1)
    b: list[str] = Field(min_length=1)
    name: str | None = None
    """How the report names the comparison (default: ``A vs B``)."""

    @model_validator(mode="before")
    @classmethod
    def _pair(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            if len(value) != 2 or not all(isinstance(v, str) for v in value):
                raise ValueError("a comparison is a pair of model names [A, B], or {a: [...], b: [...]}")
            return {"a": [value[0]], "b": [value[1]]}
        if isinstance(value, dict):
            return {k: [v] if k in ("a", "b") and isinstance(v, str) else v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _apart(self) -> Comparison:
        for side, names in (("a", self.a), ("b", self.b)):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{twice[0]!r} is listed twice in {side}: a comparison is a set of pairs")
        if set(self.a) & set(self.b):
            raise ValueError(f"{sorted(set(self.a) & set(self.b))[0]!r} is on both sides of the comparison")
        return self

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Every (A, B) of the comparison: each model of ``a`` against each of ``b``."""
        return [(a, b) for a in self.a for b in self.b]

    @property
    def title(self) -> str:
        """The comparison's name in the report."""
        return self.name or f"{', '.join(self.a)} vs {', '.join(self.b)}"


class StudyFile(BaseModel):
    """A whole study."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "study"
    models: list[ModelEntry] = Field(min_length=1)
    suites: list[SuiteEntry] = Field(min_length=1)
    limit: int | None = Field(default=None, ge=1)
    """Items per condition of every suite that names none."""
    seed: int = 0
    retries: int = Field(default=2, ge=0, le=MAX_RETRIES)
    """How many times a failed run is tried again by later ``study run`` calls."""
    where: Where = Where()
    run: RunOptions = Field(default_factory=RunOptions)  # type: ignore[valid-type]
    """Run options of every run (``per_token: true``...)."""
    compare: list[Comparison] = Field(default_factory=list)
    """Pairs (or groups) of models the report tests against each other, by their study names."""
    out: str | None = None
    """The study directory (relative to the study file); ``study run --out`` overrides it."""
    base: Path = Field(default=Path("."), exclude=True)
    """The study file's directory: relative paths in it resolve from there."""
    source: Path | None = Field(default=None, exclude=True)
    """The study file read (named in the errors of planning); None for a study built in code."""

    @model_validator(mode="after")
    def _compared_models_exist(self) -> StudyFile:
        names = {label for m in self.models for label in m.labels}
        # A comparison is a set of unordered pairs: a pair named twice (or reversed) would be two rows of one
        # test, and every Holm-corrected p of the table would count it twice.
        seen: dict[frozenset[str], tuple[int, str, str]] = {}
        for k, c in enumerate(self.compare):
            unknown = [n for n in (*c.a, *c.b) if n not in names]
            if unknown:
                raise ValueError(f"compare[{k}]: {unknown[0]!r} is not a model of the study (its models: "
                                 f"{', '.join(sorted(names))})")
            for a, b in c.pairs:
                first = seen.setdefault(frozenset((a, b)), (k, a, b))
                if first[0] != k:
                    again = "again" if first[1:] == (a, b) else f"reversed ([{first[1]}, {first[2]}])"
                    raise ValueError(f"compare[{k}]: [{a}, {b}] is compared {again} in compare[{first[0]}]; "
                                     "each pair of models is compared once")
        return self

    def resolve(self, path: str) -> str:
        """A path of the study file, relative to its directory; names (``builtin``, a suite) as they are;
        ``FORMAT:PATH`` (``clams:data/de.txt``) with its path resolved where it names a file or directory
        beside the study file, its reader's name kept (``hf:owner/name`` of a suite file stays a hub id).
        """
        spec = _SPEC.match(path)
        if spec:
            beside = self.base / spec["rest"]
            return f"{spec['kind']}:{beside}" if not Path(spec["rest"]).is_absolute() and beside.exists() else path
        candidate = Path(path)
        if candidate.is_absolute() or path in ("builtin", "official") or "/" not in path and \
                not path.endswith((".yaml", ".yml", ".json", ".jsonl", ".csv", ".tsv")):
            return path
        return str(self.base / candidate)


def load_study(path: Path) -> StudyFile:
    """Read and validate a study file.

    Raises:
        ConfigError: one line naming the file and the field (or the YAML line).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: not a study file ({'a directory' if path.is_dir() else 'no such file'})")
    if path.stat().st_size > MAX_STUDY_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_STUDY_BYTES} bytes; not a study file")
    data = load_config_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a study file is a mapping with models and suites")
    for key in ("base", "source"):  # set from the file's place, never from its text
        if key in data:
            raise ConfigError(f"{path}, field '{key}': unknown key")
    try:
        return StudyFile.model_validate({**data, "base": path.resolve().parent, "source": path})
    except ValidationError as e:
        raise ConfigError(one_line(e, path)) from None
