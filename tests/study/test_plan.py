"""The planner: one run per model (or checkpoint) × suite (× language), unique directories,
every run planned (data read) before a model loads, and planning 50 runs in seconds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import stand_in, study_backend

from lingdiag.errors import ConfigError, DatasetError
from lingdiag.study.execute import check_plan
from lingdiag.study.plan import plan_study
from lingdiag.study.schema import StudyFile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _study(tmp_path: Path, **extra: object) -> StudyFile:
    data = {"models": [{"spec": "m1", "family": "F", "size": "135M"},
                       {"name": "tiny", "checkpoints": [{"path": "ck/s1", "step": 1}, {"path": "ck/s2", "step": 2}]}],
            "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml")},
                       {"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                        "axes": {"strategy": "zero-shot"}, "limit": 4}], **extra}
    return StudyFile.model_validate({**data, "base": tmp_path})


def test_every_model_and_checkpoint_meets_every_suite(tmp_path: Path) -> None:
    runs = plan_study(_study(tmp_path))
    assert [r.key for r in runs] == ["m1/agreement-pairs", "m1/imperfective-imperfective-nli-sample",
                                     "tiny_step1/agreement-pairs", "tiny_step1/imperfective-imperfective-nli-sample",
                                     "tiny_step2/agreement-pairs", "tiny_step2/imperfective-imperfective-nli-sample"]
    ckpt = runs[2]
    assert ckpt.config.model == f"hf:{tmp_path / 'ck/s1'}" and ckpt.model.base == "tiny" and ckpt.model.step == 1
    assert runs[1].config.axes == {"strategy": ["zero-shot"]} and runs[1].config.limit == 4
    assert runs[0].model.n_params == 135e6 and runs[0].model.family == "F"
    assert len(check_plan(runs, stand_in(study_backend))["m1/imperfective-imperfective-nli-sample"].order()) == 4


def test_languages_are_one_run_each(tmp_path: Path) -> None:
    for lang in ("en", "fr"):
        (tmp_path / f"{lang}.jsonl").write_text((EXAMPLES / "agreement-pairs.jsonl").read_text())
    study = _study(tmp_path, suites=[{"suite": "minimal-pairs", "dataset": "{language}.jsonl",
                                      "languages": ["en", "fr"], "name": "pairs"}])
    runs = plan_study(study)
    assert [(r.key, r.language, Path(r.config.dataset).name) for r in runs[:2]] == [
        ("m1/pairs-en", "en", "en.jsonl"), ("m1/pairs-fr", "fr", "fr.jsonl")]


def test_two_runs_in_one_directory_are_refused(tmp_path: Path) -> None:
    study = _study(tmp_path, models=[{"spec": "m1"}, {"spec": "m2", "name": "m1"}])
    with pytest.raises(ConfigError, match="planned twice"):
        plan_study(study)


def test_bad_data_is_named_with_its_run_before_any_model_loads(tmp_path: Path) -> None:
    study = _study(tmp_path, suites=[{"suite": "imperfective", "dataset": str(tmp_path / "missing.json")}])
    with pytest.raises(DatasetError, match="run m1/imperfective-missing"):
        check_plan(plan_study(study), stand_in(study_backend))


def test_fifty_runs_plan_in_seconds(tmp_path: Path) -> None:
    study = _study(tmp_path, models=[{"spec": f"m{k}"} for k in range(25)])
    started = time.perf_counter()
    runs = plan_study(study)
    check_plan(runs, stand_in(study_backend))
    assert len(runs) == 50
    assert time.perf_counter() - started < 10


def test_a_study_of_too_many_runs_is_refused_before_planning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_MAX_STUDY_RUNS", "5")
    with pytest.raises(ConfigError, match="the study plans 6 runs; the limit is 5 runs; raise it with "
                                          "LINGDIAG_MAX_STUDY_RUNS=N"):
        plan_study(_study(tmp_path))


def test_run_options_reach_every_run_a_suites_over_a_models_over_the_studys(tmp_path: Path) -> None:
    study = _study(tmp_path, run={"per_token": True, "chunk_items": 8},
                   models=[{"spec": "m1", "run": {"chunk_items": 4}}, {"spec": "m2"}],
                   suites=[{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs",
                            "run": {"chunk_items": 2}},
                           {"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                            "name": "nli", "limit": 2}])
    runs = {r.key: r.config for r in plan_study(study)}
    assert {k: (c.per_token, c.chunk_items) for k, c in runs.items()} == {
        "m1/pairs": (True, 2), "m1/nli": (True, 4), "m2/pairs": (True, 2), "m2/nli": (True, 8)}
    assert runs["m1/pairs"].recorded()["per_token"] is True  # meta.json's config says so, as a single run's
    check_plan(list(plan_study(study)), stand_in(study_backend))


def test_every_run_option_of_a_single_run_is_a_study_run_option() -> None:
    from lingdiag.config import RunConfig
    from lingdiag.study.schema import STUDY_SETS, RunOptions

    assert set(RunOptions.model_fields) == set(RunConfig.model_fields) - set(STUDY_SETS)
    assert {"per_token", "chunk_items", "batch_tokens", "think_tags", "after_thinking"} <= set(RunOptions.model_fields)


def test_a_bad_run_option_is_named_with_its_run_at_plan_time(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"models\[0\]/suites\[0\]: think tags .<a>."):
        plan_study(_study(tmp_path, run={"think_tags": "<a>"}))


def test_a_format_prefixed_dataset_resolves_beside_the_study_file(tmp_path: Path) -> None:
    """``clams:PATH`` (and ``{language}`` in it): the path resolves from the study file's folder, the
    reader's name stays; a suite file's ``hf:owner/name`` is not a path and is kept."""
    shared = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "clams"
    for lang in ("en", "de"):
        (tmp_path / "clams" / lang).mkdir(parents=True)
        (tmp_path / "clams" / lang / "simple_agrmt.txt").write_text(
            "True\tthe author laughs\nFalse\tthe author laugh\nTrue\tthe authors swim\nFalse\tthe authors swims\n"
            if not (shared / f"{lang}_evalset").is_dir()
            else (shared / f"{lang}_evalset" / "simple_agrmt.txt").read_text())
    study = _study(tmp_path, suites=[{"suite": "minimal-pairs", "name": "clams", "languages": ["en", "de"],
                                      "dataset": "clams:clams/{language}/simple_agrmt.txt", "limit": 3}])
    runs = plan_study(study)
    assert [r.config.dataset for r in runs[:2]] == [f"clams:{tmp_path}/clams/{lang}/simple_agrmt.txt"
                                                    for lang in ("en", "de")]
    plans = check_plan(runs, stand_in(study_backend))
    assert len(plans["m1/clams-de"].order()) == 3
    assert study.resolve("hf:owner/name") == "hf:owner/name"
