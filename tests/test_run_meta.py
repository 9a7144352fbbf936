"""``RunMeta`` is the only reader and writer of ``meta.json``: an existing file reads and writes
back byte for byte, and a key it does not know or a key it needs is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lingdiag.errors import RunError
from lingdiag.rundir import RunMeta, RunStore

# meta.json files as lingdiag wrote them before RunMeta wrote them (key order and values as on disk).
RUN: dict[str, Any] = {
    "config": {"axes": {}, "batch_tokens": None, "chunk_items": 64, "dataset": "builtin", "limit": 4,
               "model": "mock", "model_options": {}, "options": {}, "seed": 0, "shard": None,
               "shard_base_urls": [], "suite": "imperfective", "trust_remote_code": False},
    "dataset": {"builtin": ""},
    "lock": {"differs": {}, "matches": True, "unlocked": []},
    "model": {"backend": "hf", "model": "smollm2-135m+steer-1a2b3c4d@0.5", "adapter": "steer",
              "adapter_sha256": "1a2b3c4d" * 8, "steer_layers": "3,5", "steer_alpha": "0.5",
              "weights_sha256": "ab" * 32},
    "schema_version": 1,
    "scoring_policies": {"minimal/simple": [{"leading_space": False, "name": "minicons", "prefix": "auto",
                                             "prefix_scope": "always", "score_first_token": False,
                                             "whitespace_correction": False}]},
    "seed": 0,
    "skipped": {"cot": "backend mock cannot serve loglikelihood requests"},
    "suite_file": {"path": "my.yaml", "sha256": "cd" * 32},
    "timings": {"dap": 0.012},
    "usage": {"cache_hits": 0, "cache_misses": 8},
    "versions": {"lingdiag": "0.1.0", "python": "3.12.3"},
}
MERGED = {**RUN, "shards": [{"dir": "/x/s1", "shard": "1/2", "base_url": "http://a"}, {"dir": "/x/s2", "shard": "2/2"}]}
IMPORTED = {"config": {"dataset": "official", "model": "gpt-x", "suite": "explica"},
            "imported": {"file": "answers.csv", "sha256": "ef" * 32},
            "model": {"backend": "imported", "model": "gpt-x"}}


@pytest.mark.parametrize("meta", [RUN, MERGED, IMPORTED], ids=["run", "merged", "imported"])
def test_an_existing_meta_json_round_trips_byte_for_byte(tmp_path: Path, meta: dict[str, Any]) -> None:
    store = RunStore(tmp_path)
    text = json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # as RunStore wrote it
    store.meta_path.write_text(text, encoding="utf-8")
    read = store.read_meta()
    store.write_meta(read)
    assert store.meta_path.read_text(encoding="utf-8") == text
    assert read == RunMeta.read(store.meta_path)


def test_typed_parts_read_what_the_file_holds(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.meta_path.write_text(json.dumps(RUN), encoding="utf-8")
    meta = store.read_meta()
    assert (meta.suite, meta.model, meta.dataset, meta.seed) == ("imperfective", "smollm2-135m+steer-1a2b3c4d@0.5",
                                                                 "builtin", 0)
    assert (meta.identity.backend, meta.identity.weights_sha256) == ("hf", "ab" * 32)
    assert meta.run_config.limit == 4 and meta.run_config.model == "mock"


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m | {"pondering": True}, r"meta.json: unknown key 'pondering' \(known: "),
    (lambda m: {k: v for k, v in m.items() if k != "model"}, r"meta.json: missing key 'model'$"),
    (lambda m: m | {"timings": [1.0]}, r"meta.json, field 'timings': Input should be a valid dictionary"),
    (lambda m: m | {"seed": "0"}, r"meta.json, field 'seed': Input should be a valid integer \(got '0'\)$"),
    (lambda m: m | {"thinking": {"c1": {"budget": 0, "effort": "", "forced": False, "tags": ["<t>", "</t>"]}}},
     r"meta.json, field 'thinking.c1.setting': Field required$"),
    (lambda m: m | {"lock": {"matches": "yes", "differs": {}, "unlocked": []}},
     r"meta.json, field 'lock.matches': Input should be a valid boolean"),
    (lambda m: m | {"model": m["model"] | {"n_params": [1]}}, r"meta.json, field 'model.n_params': Input should be"),
    (lambda m: m | {"timings": {"dap": "slow"}}, r"meta.json, field 'timings.dap': Input should be a valid"),
    (lambda m: m | {"shards": [{"shard": "1/2", "dir": "/x", "host": "h"}]},
     r"meta.json, field 'shards.0.host': unknown key$"),
])
def test_an_unknown_missing_or_mistyped_key_is_one_line_naming_meta_json(tmp_path: Path, change, message) -> None:
    store = RunStore(tmp_path)
    store.meta_path.write_text(json.dumps(change(dict(RUN))), encoding="utf-8")
    with pytest.raises(RunError, match=message) as e:
        store.read_meta()
    assert str(tmp_path / "meta.json") in str(e.value) and "\n" not in str(e.value)


def test_a_config_this_version_cannot_read_names_meta_json_and_the_field(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.meta_path.write_text(json.dumps(RUN | {"config": RUN["config"] | {"limit": "many"}}), encoding="utf-8")
    with pytest.raises(RunError, match=r"meta.json: config.limit: Input should be a valid integer.* \(got 'many'\)$"):
        _ = store.read_meta().run_config


def test_meta_json_is_written_by_write_meta_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="write_meta"):
        RunStore(tmp_path).write_json("meta.json", {})
