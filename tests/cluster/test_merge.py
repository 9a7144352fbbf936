"""Item shards run in-process and merged: the merged run is byte-identical to the unsharded one,
and merge refuses anything that is not the complete set of shards of one run."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import Thinker

from lingdiag.cluster import merge
from lingdiag.config import RunConfig, Shard
from lingdiag.engine.run import evaluate, plan
from lingdiag.errors import ConfigError, RunError
from lingdiag.models.mock import MockBackend
from lingdiag.records import Generation, GenerationRequest, LoglikelihoodRequest
from lingdiag.suites.minimal_pairs.formats import IDENTICAL

CONFIG = {"suite": "imperfective", "model": "mock", "axes": {"strategy": ["zero-shot", "dap"]}, "limit": 24,
          "options": {"max_new_tokens": 4}, "chunk_items": 5}
BYTE_IDENTICAL = ("items.jsonl", "metrics.json", "table.md")


def answer(r: GenerationRequest) -> str:
    return "True" if hashlib.sha256(r.messages[-1].content.encode()).digest()[0] % 2 else "False"


def run_shards(root: Path, n: int, **changes: object) -> list[Path]:
    dirs = []
    for k in range(1, n + 1):
        config = RunConfig.model_validate({**CONFIG, **changes, "shard": f"{k}/{n}"})
        evaluate(config, MockBackend(answer), root / f"{k}-of-{n}")
        dirs.append(root / f"{k}-of-{n}")
    return dirs


def test_shards_partition_items_by_id_and_merge_byte_identical(tmp_path):
    whole = tmp_path / "whole"
    evaluate(RunConfig.model_validate(CONFIG), MockBackend(answer), whole)
    dirs = run_shards(tmp_path / "shards", 3)
    # Each shard holds some items, every condition of an item is in one shard, none is in two.
    owner: dict[str, int] = {}
    for k, d in enumerate(dirs, 1):
        ids = [json.loads(line)["item_id"] for line in (d / "items.jsonl").read_text().splitlines()]
        assert 0 < len(set(ids)) < 24
        for i in ids:
            assert owner.setdefault(i, k) == k
    assert len(owner) == 24
    merged = merge(list(reversed(dirs)), tmp_path / "merged")
    for name in BYTE_IDENTICAL:
        assert (merged.out / name).read_bytes() == (whole / name).read_bytes(), name
    a, b = (json.loads((d / "meta.json").read_text()) for d in (whole, merged.out))
    assert [s["shard"] for s in b.pop("shards")] == ["1/3", "2/3", "3/3"]
    assert set(a.pop("timings")) == set(b.pop("timings")) == {"zero-shot", "dap"}
    assert (a.pop("origin"), b.pop("origin")) == (str(whole.resolve()), str(merged.out.resolve()))  # each its own
    assert a == b  # the config is the unsharded one: shard and shard_base_urls are unset


def test_assignment_is_stable_when_n_items_or_order_change():
    ids = [f"item-{i}" for i in range(200)]
    three = {i for i in ids if Shard(index=2, count=3).holds(i)}
    assert three == {i for i in reversed(ids[:150] + ids[150:]) if Shard.model_validate("2/3").holds(i)}
    assert 40 < len(three) < 95
    config = RunConfig.model_validate({**CONFIG, "limit": None, "shard": "2/3"})
    planned = plan(config)
    assert planned.items["zero-shot"] == planned.items["dap"]  # all conditions of an item together
    assert all(Shard(index=2, count=3).holds(it.id) for it in planned.items["dap"])


@pytest.mark.parametrize("text", ["4/3", "0/3", "2", "a/b"])
def test_bad_shard_is_refused(text):
    with pytest.raises(Exception, match="shard"):
        RunConfig.model_validate({**CONFIG, "shard": text})


def test_merge_refuses_other_configs_missing_and_duplicated_shards(tmp_path):
    dirs = run_shards(tmp_path / "a", 3)
    other = run_shards(tmp_path / "b", 3, limit=20)
    with pytest.raises(RunError, match="configurations differ in limit"):
        merge([dirs[0], other[1], dirs[2]], tmp_path / "m")
    with pytest.raises(RunError, match=r"missing shards 2 of 3 \(have 1, 3\)"):
        merge([dirs[0], dirs[2]], tmp_path / "m")
    shutil.copytree(dirs[1], tmp_path / "copy")
    with pytest.raises(RunError, match=r"shards given more than once: 2/3 in .*2-of-3, .*copy"):
        merge([*dirs, tmp_path / "copy"], tmp_path / "m")
    evaluate(RunConfig.model_validate(CONFIG), MockBackend(answer), tmp_path / "whole")
    with pytest.raises(RunError, match="is not a shard"):
        merge([*dirs, tmp_path / "whole"], tmp_path / "m")
    with pytest.raises(RunError, match="is one of the shards"):
        merge(dirs, dirs[0])
    # The command line says it in one line, with no traceback.
    proc = subprocess.run([sys.executable, "-m", "lingdiag", "merge", str(dirs[0]), str(other[1]), str(dirs[2]),
                           "--out", str(tmp_path / "m")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "configurations differ in limit" in proc.stderr, proc.stderr


def test_unfinished_shard_is_refused(tmp_path):
    dirs = run_shards(tmp_path, 3)
    lines = (dirs[1] / "items.jsonl").read_text().splitlines(keepends=True)
    (dirs[1] / "items.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(RunError, match="shard 2/3 has not finished \\(1 records missing\\)"):
        merge(dirs, tmp_path / "m")


def test_shard_server_from_template_or_list():
    shard = {**CONFIG, "model": "openai:m@http://node{shard}:8000/v1", "shard": "2/3"}
    assert str(RunConfig.model_validate(shard).model_spec()) == "openai:m@http://node2:8000/v1"
    listed = {**shard, "model": "openai:m", "shard_base_urls": ["http://a/v1", "http://b/v1", "http://c/v1"]}
    assert str(RunConfig.model_validate(listed).model_spec()) == "openai:m@http://b/v1"
    with pytest.raises(Exception, match="one per shard"):
        RunConfig.model_validate({**listed, "shard_base_urls": ["http://a/v1"]})
    with pytest.raises(ConfigError, match="needs an openai: model"):
        RunConfig.model_validate({**listed, "model": "smollm2-135m"}).model_spec()


def _thought(h: int, r: GenerationRequest, label: str) -> Generation:
    """A trace inline, then an answer; one item in four never closes its trace."""
    if h % 4 == 0:
        return Generation(text="<think>weighing it", n_tokens=9)
    return Generation(text=f"<think>weighing it {h % 5}</think>\n{label}", n_tokens=12, reasoning_tokens=9)


def test_a_thinking_runs_shards_merge_into_the_unsharded_run_meta_included(tmp_path):
    """The merged meta.json is the first shard's for the run's own parts: the thinking setting of each
    condition (dropped by merge before) is there as in the unsharded run."""
    config = {"suite": "imperfective", "model": "thinker", "limit": 12, "chunk_items": 5,
              "axes": {"strategy": ["zero-shot"], "thinking": ["off", "on"]}}
    evaluate(RunConfig.model_validate(config), Thinker("thinker", _thought), tmp_path / "whole")
    dirs = []
    for k in (1, 2):
        dirs.append(tmp_path / f"{k}-of-2")
        evaluate(RunConfig.model_validate({**config, "shard": f"{k}/2"}), Thinker("thinker", _thought), dirs[-1])
    merged = merge(dirs, tmp_path / "merged")
    for name in BYTE_IDENTICAL:
        assert (merged.out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    a, b = (json.loads((d / "meta.json").read_text()) for d in (tmp_path / "whole", merged.out))
    b.pop("shards")
    assert set(a.pop("timings")) == set(b.pop("timings"))
    assert (a.pop("origin"), b.pop("origin")) == (str((tmp_path / "whole").resolve()), str(merged.out.resolve()))
    assert a["thinking"] and set(a["thinking"]) == {"zero-shot/thinking-off", "zero-shot/thinking-on"}
    assert a == b


def _shorter_is_likelier(r: LoglikelihoodRequest) -> float:
    return -float(len(r.continuation))


def _blimp(path: Path, n: int, identical: set[int]) -> None:
    """A BLiMP-format paradigm of ``n`` pairs, those numbered in ``identical`` with one sentence twice."""
    rows = [{"sentence_good": f"The cats {k} sleep.", "sentence_bad": f"The cats {k} sleep." if k in identical
             else f"The cats {k} sleeps.", "UID": "agreement", "pairID": str(k), "field": "morphology",
             "linguistics_term": "agreement", "simple_LM_method": True, "one_prefix_method": False,
             "two_prefix_method": False, "lexically_identical": False} for k in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_merged_minimal_pairs_run_names_its_excluded_pairs_as_the_unsharded_run_does(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _blimp(data / "agreement.jsonl", 12, {3, 7})
    config = {"suite": "minimal-pairs", "model": "mock", "dataset": str(data), "chunk_items": 4,
              "axes": {"scoring-policy": ["lingdiag", "lm-eval"]}}
    whole = tmp_path / "whole"
    evaluate(RunConfig.model_validate(config), MockBackend(loglik_fn=_shorter_is_likelier), whole)
    assert (whole / "table.md").read_text().startswith("**Excluded items** (not interpretable, never scored): 2; ")
    dirs = []
    for k in (1, 2, 3):
        dirs.append(tmp_path / f"{k}-of-3")
        evaluate(RunConfig.model_validate({**config, "shard": f"{k}/3"}), MockBackend(loglik_fn=_shorter_is_likelier),
                 dirs[-1])
    merged = merge(dirs, tmp_path / "merged")
    for name in BYTE_IDENTICAL:
        assert (merged.out / name).read_bytes() == (whole / name).read_bytes(), name
    a, b = (json.loads((d / "meta.json").read_text()) for d in (whole, merged.out))
    assert len(b.pop("shards")) == 3 and set(a.pop("timings")) == set(b.pop("timings"))
    assert (a.pop("origin"), b.pop("origin")) == (str(whole.resolve()), str(merged.out.resolve()))
    assert a["excluded"] == [{"item_id": "agreement/3", "reason": IDENTICAL}, {"item_id": "agreement/7",
                                                                               "reason": IDENTICAL}]
    assert a == b
