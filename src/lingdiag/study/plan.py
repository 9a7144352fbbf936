"""Every (model, suite) run of a study, planned as a ``RunConfig`` with its place in the study.

A model with checkpoints is one run per checkpoint and suite; a suite with languages is one
run per language. Each run has a key (its directory under ``runs/``), unique in the study.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, LingdiagError, RunError, located
from lingdiag.io.limits import MAX_STUDY_RUNS
from lingdiag.io.paths import path_safe
from lingdiag.rundir import answer_changes
from lingdiag.rundir.study import RUNS, Compared, RunEntry, StudyModel, StudyState
from lingdiag.study.schema import LANGUAGE, Checkpoint, Comparison, ModelEntry, StudyFile, SuiteEntry, run_options


def slug(text: str) -> str:
    """``text`` as one safe path component."""
    safe = path_safe(text).strip("._") or "_"
    return safe[:120]


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One run of the study."""

    key: str
    """The run's directory under ``runs/`` (``model/suite``)."""
    model: StudyModel
    suite: str
    """The suite's name in the study."""
    language: str | None
    config: RunConfig
    origin: str = ""
    """Where the study file sets the run: ``models[M]/suites[S]`` (named in its errors)."""

    def directory(self, out: Path) -> Path:
        """The run's directory in the study directory ``out``."""
        return Path(out) / RUNS / self.key

    def to_json(self) -> dict[str, Any]:
        """As ``study.json`` holds it."""
        return {"key": self.key, "model": self.model.to_json(), "suite": self.suite, "language": self.language,
                "config": self.config.recorded()}


def _models(entry: ModelEntry, study: StudyFile) -> Iterator[StudyModel]:
    family = entry.family or entry.label
    if entry.spec is not None:
        yield StudyModel(label=entry.label, spec=entry.spec, family=family, n_params=entry.parameters)
    for c in entry.checkpoints:
        yield StudyModel(label=c.label(entry.label), spec=_checkpoint_spec(c, study), family=family,
                         n_params=entry.parameters, step=c.step, tokens=c.tokens, base=entry.label)


def _checkpoint_spec(c: Checkpoint, study: StudyFile) -> str:
    if c.spec is not None:
        return c.spec
    assert c.path is not None
    path = Path(c.path)
    return f"hf:{path if path.is_absolute() else (study.base / path)}"


def _suite_runs(entry: SuiteEntry, study: StudyFile) -> Iterator[tuple[str, str | None, str, str]]:
    """(name in the study, language, suite, dataset) of each run of a suite entry."""
    languages: list[str | None] = [*entry.languages] or [None]
    for language in languages:
        def place(text: str, language: str | None = language) -> str:
            return text if language is None else text.replace(LANGUAGE, language)

        suite, dataset = study.resolve(place(entry.suite)), study.resolve(place(entry.dataset))
        base = entry.name or (Path(entry.suite).stem if entry.dataset == "builtin" else
                              f"{Path(entry.suite).stem}-{Path(entry.dataset).stem}").replace(LANGUAGE, "")
        name = base if language is None else f"{base}-{language}"
        yield name, language, suite, dataset


def plan_study(study: StudyFile) -> list[PlannedRun]:
    """The runs of ``study``, model by model (so one model load serves all its suites).

    Raises:
        ConfigError: two runs would share a directory, or a run's configuration is invalid.
    """
    n = sum(bool(m.spec) + len(m.checkpoints) for m in study.models) * sum(len(s.languages) or 1 for s in study.suites)
    if n > MAX_STUDY_RUNS.value:
        raise ConfigError(f"the study plans {n} runs; {MAX_STUDY_RUNS.how_to_raise()}")
    runs: list[PlannedRun] = []
    seen: dict[str, str] = {}
    for m, entry in enumerate(study.models):
        for model in _models(entry, study):
            for s, suite_entry in enumerate(study.suites):
                for name, language, suite, dataset in _suite_runs(suite_entry, study):
                    key = f"{slug(model.label)}/{slug(name)}"
                    if key in seen:
                        raise ConfigError(f"models[{m}] and suites[{s}]: run {key!r} is planned twice "
                                          f"({seen[key]}); give the models or suites distinct names")
                    seen[key] = f"{model.label} × {name}"
                    origin = f"models[{m}]/suites[{s}]"
                    config = _config(study, entry, model, suite_entry, suite, dataset, origin)
                    runs.append(PlannedRun(key, model, name, language, config, origin))
    return runs


def _config(study: StudyFile, entry: ModelEntry, model: StudyModel, suite_entry: SuiteEntry, suite: str,
            dataset: str, where: str) -> RunConfig:
    run = run_options(study.run, entry.run, suite_entry.run)
    if run.get("after_thinking"):  # RUN_DIR[:CONDITION], the directory relative to the study file
        where_run, colon, condition = str(run["after_thinking"]).partition(":")
        run["after_thinking"] = study.resolve(where_run if "/" in where_run else f"./{where_run}") + colon + condition
    try:
        return RunConfig(suite=suite, model=model.spec, dataset=dataset, axes=suite_entry.axes,
                         options=suite_entry.options, limit=suite_entry.limit or study.limit, seed=study.seed,
                         model_options=entry.options, items=_items(study, suite_entry, suite), **run)
    except ValueError as e:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"{where}: {' '.join(str(e).split())}") from None
    except LingdiagError as e:  # a validator's own one-line error (think tags)
        raise located(e, where) from None


def _items(study: StudyFile, entry: SuiteEntry, suite: str) -> list[str] | None:
    """The item ids of the suite entry's ``items`` file (anchors of the study's name for the suite or of the suite)."""
    if entry.items is None:
        return None
    from lingdiag.items.anchors import read_item_ids

    path = Path(entry.items)
    return read_item_ids(path if path.is_absolute() else study.base / path,
                         [n for n in (entry.name, Path(suite).stem) if n])


def replanned(name: str, retries: int, planned: Sequence[PlannedRun], old: StudyState | None,
              compare: Sequence[Comparison] = ()) -> StudyState:
    """The ``study.json`` of a (re)planned study: each run keeps the attempts ``old`` records of it; the
    comparisons are the study file's now.

    Raises:
        RunError: a run already in the study directory was planned with another configuration.
    """
    before = {r.key: r for r in old.runs} if old else {}
    runs = []
    for p in planned:
        entry = RunEntry.model_validate(p.to_json())
        if p.key in before:
            # Transport settings may change between attempts; a suite or data file is compared by what the run
            # read of it (``study run`` checks each run's directory against the plan), not by where it lies.
            changed = answer_changes(before[p.key].config, entry.config)
            if changed:
                raise RunError(f"run {p.key!r} of the study directory was planned with another configuration "
                               f"(differs in: {', '.join(changed)}); use another --out directory")
            entry.state = before[p.key].state
        runs.append(entry)
    return StudyState(name=name, retries=retries, runs=runs,
                      compare=[Compared(name=c.title, a=c.a, b=c.b) for c in compare])
