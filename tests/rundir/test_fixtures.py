"""Run directories written at 3789a70 (schema 1) read through today's typed schema, and
``meta.json`` read and written back byte-identically."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lingdiag.reading import load_run
from lingdiag.records import ScoreOutput, TextOutput
from lingdiag.rundir import RunStore, read_run
from lingdiag.rundir.parts import ImportedPart, LockPart, PrecisionPart, ShardPart, ThinkingPart

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rundir-3789a70"
RUNS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def test_every_kind_of_run_is_kept_as_a_fixture() -> None:
    assert RUNS == ["after-thinking", "excluded", "imported", "merged", "plain", "precision", "suite-file", "thinking"]


@pytest.mark.parametrize("name", RUNS)
def test_a_3789a70_run_reads_typed_and_writes_back_byte_identical(name: str, tmp_path: Path) -> None:
    run = shutil.copytree(FIXTURES / name, tmp_path / name)
    before = (run / "meta.json").read_bytes()
    read = read_run(run)
    assert read.records and read.state.line is None
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
    thinking = meta["thinking"].thinking or {}
    assert isinstance(thinking["zero-shot/thinking-on"], ThinkingPart)
    assert thinking["zero-shot/thinking-on"].tags == ["<think>", "</think>"]
    after = (meta["after-thinking"].after_thinking or {})["zero-shot/loglik/after-thinking"]
    assert (after.condition, after.setting, after.not_scored) == ("zero-shot/thinking-on", "on", {})
    assert meta["precision"].precision == PrecisionPart(dtype="bfloat16", per_token_noise=0.3,
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
