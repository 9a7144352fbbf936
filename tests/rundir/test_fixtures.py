"""Run directories written at 3789a70 (schema 1), at 6472672 (before the ``finished`` part) and at 87d9da2
(before ``summary.npz``) read through today's typed schema and run state, and ``meta.json`` read and written
back byte-identically."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import fixture_runs

from lingdiag.conditions.precision import PrecisionPart
from lingdiag.conditions.thinking import ThinkingPart
from lingdiag.reading import load_run, load_runs
from lingdiag.records import ScoreOutput, TextOutput
from lingdiag.rundir import Phase, RunStore, read_run
from lingdiag.rundir.parts import ImportedPart, LockPart, ShardPart
from lingdiag.study.status import grid

FIXTURES = fixture_runs("rundir-3789a70")
RUNS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
LATER_RUNS = ["merged", "plain", "stopped", "study/runs/a/nli", "study/runs/b/nli", "suite-file"]
STOPPED = {"6472672": 2, "87d9da2": 4}
"""Each later fixture set's stopped run: how many of its 6 planned items the killed session recorded."""


def test_every_kind_of_run_is_kept_as_a_fixture() -> None:
    assert RUNS == ["after-thinking", "excluded", "imported", "merged", "plain", "precision", "suite-file", "thinking"]


@pytest.mark.parametrize("name", RUNS)
def test_a_3789a70_run_reads_typed_and_writes_back_byte_identical(name: str, tmp_path: Path) -> None:
    run = shutil.copytree(FIXTURES / name, tmp_path / name)
    before = (run / "meta.json").read_bytes()
    read = read_run(run)
    # Its data or suite file, named where it was written, is gone: current or not cannot be said, and is shown.
    gone = read.state.unchecked
    assert read.records and not read.state.changes
    assert read.state.line is None if not gone else read.state.status == "unchecked" and gone[0] in str(read.state.line)
    RunStore(run).write_meta(read.meta)
    assert (run / "meta.json").read_bytes() == before
    items = (run / "items.jsonl").read_bytes()
    assert "".join(r.to_json() + "\n" for r in read.records).encode() == items


def test_outputs_are_typed_by_what_answered_them() -> None:
    thinking = read_run(FIXTURES / "thinking").records
    texts = [o for r in thinking for o in r.outputs]
    assert texts and all(isinstance(o, TextOutput) for o in texts)
    assert any(o.thought and o.reasoning_tokens == 9 for o in texts if isinstance(o, TextOutput))
    scores = [o for r in read_run(FIXTURES / "precision").records for o in r.outputs]
    assert scores and all(isinstance(o, ScoreOutput) and isinstance(o.logprob, float) for o in scores)


def test_each_part_is_read_into_its_typed_form() -> None:
    meta = {name: read_run(FIXTURES / name).meta for name in RUNS}
    assert isinstance(meta["plain"].lock, LockPart) and meta["plain"].schema_version == 1
    thinking = meta["thinking"].parts["thinking"]
    assert isinstance(thinking["zero-shot/thinking-on"], ThinkingPart)
    assert thinking["zero-shot/thinking-on"].tags == ["<think>", "</think>"]
    after = meta["after-thinking"].parts["after_thinking"]["zero-shot/loglik/after-thinking"]
    assert (after.condition, after.setting, after.not_scored) == ("zero-shot/thinking-on", "on", {})
    assert meta["precision"].parts["precision"] == PrecisionPart(dtype="bfloat16", per_token_noise=0.3,
                                                        rescore_fragile="float32")
    assert [s.shard for s in meta["merged"].shards or []] == ["1/2", "2/2"]
    assert all(isinstance(s, ShardPart) for s in meta["merged"].shards or [])
    imported = meta["imported"].imported
    assert isinstance(imported, ImportedPart) and imported.task == "rating" and meta["imported"].schema_version is None
    assert [(e.item_id, e.reason) for e in meta["excluded"].excluded or ()] == \
        [("u/p2", "good and bad sentences identical")]
    assert meta["suite-file"].suite_file is not None and len(meta["suite-file"].suite_file.sha256) == 64


@pytest.mark.parametrize("name", RUNS)
def test_a_3789a70_run_loads_with_its_metrics(name: str) -> None:
    loaded = load_run(FIXTURES / name)
    assert loaded.rows and all("n" in row.metrics for row in loaded.rows)


@pytest.mark.parametrize("commit", STOPPED)
def test_every_kind_of_later_run_is_kept(commit: str) -> None:
    later = fixture_runs(f"rundir-{commit}")
    assert sorted(p.parent.relative_to(later).as_posix() for p in later.rglob("meta.json")) == LATER_RUNS


@pytest.mark.parametrize("commit", STOPPED)
@pytest.mark.parametrize("name", LATER_RUNS)
def test_a_later_run_reads_with_its_state_and_writes_back_byte_identical(commit: str, name: str,
                                                                         tmp_path: Path) -> None:
    run = shutil.copytree(fixture_runs(f"rundir-{commit}") / name, tmp_path / "run")
    before = (run / "meta.json").read_bytes()
    read = read_run(run)
    if name == "stopped":  # a killed session: planned, recorded, no end
        recorded = STOPPED[commit]
        assert (read.state.phase, read.state.planned, read.state.recorded) == (Phase.STOPPED, 6, recorded)
        assert read.state.line == f"run not finished (stopped): {recorded} of 6 items"
    else:
        gone = read.state.unchecked  # the suite-file run's suite file is gone: shown as unchecked
        assert read.state.complete and (read.state.line is None) == (not gone) == (name != "suite-file")
        assert read.state.planned == len(read.records)
        assert (read.meta.finished is None) == (commit == "6472672")  # finish writes its part since
    RunStore(run).write_meta(read.meta)
    assert (run / "meta.json").read_bytes() == before
    assert "".join(r.to_json() + "\n" for r in read.records).encode() == (run / "items.jsonl").read_bytes()
    assert load_run(run).rows


@pytest.mark.parametrize("commit", STOPPED)
def test_a_later_study_reads_as_done_under_its_study_names(commit: str, tmp_path: Path) -> None:
    study = shutil.copytree(fixture_runs(f"rundir-{commit}") / "study", tmp_path / "study")
    assert [(r.key, r.status, r.items_done) for r in grid(study)] == [("a/nli", "done", 4), ("b/nli", "done", 4)]
    assert [r.model for r in load_runs([study / "runs" / "a" / "nli", study / "runs" / "b" / "nli"])] == ["a", "b"]
