"""The model identity (part of every cache key) hashes every weights file of a directory."""

import json
import struct
from pathlib import Path

from lingdiag.models.providers import load_backend


def shard(path: Path, note: str) -> None:
    """A minimal valid safetensors file (no tensors; the note in its metadata)."""
    header = json.dumps({"__metadata__": {"note": note}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header)


def test_sharded_directory_identity_changes_with_any_shard(tmp_path: Path) -> None:
    for k in (1, 2):
        shard(tmp_path / f"model-0000{k}-of-00002.safetensors", f"shard {k}")
    first = load_backend(f"hf:{tmp_path}").identity["weights_sha256"]
    assert len(first) == 64
    shard(tmp_path / "model-00002-of-00002.safetensors", "retrained shard 2")
    second = load_backend(f"hf:{tmp_path}").identity["weights_sha256"]
    assert len(second) == 64 and second != first  # stale cached answers can no longer be served


def test_weights_are_hashed_once_per_file_until_the_file_changes(tmp_path: Path) -> None:
    import os

    from lingdiag.io.paths import cache_dir, sha256_file, sha256_weights

    weights = tmp_path / "model.safetensors"
    shard(weights, "first")
    digest = sha256_weights(weights)
    assert digest == sha256_file(weights) == load_backend(f"hf:{tmp_path}").identity["weights_sha256"]
    memos = list((cache_dir() / "hashes").glob("*.json"))
    assert len(memos) == 1
    # The memo is what answers while size and mtime hold (a memo naming another digest is believed) ...
    memo = json.loads(memos[0].read_text())
    memos[0].write_text(json.dumps(memo | {"sha256": "remembered"}))
    assert sha256_weights(weights) == "remembered"
    # ... and a rewritten file (new mtime) is hashed again.
    shard(weights, "other")
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert sha256_weights(weights) == sha256_file(weights) != digest


# The identity (so the response cache's key) is derived from the options that may change answers: every
# option of ``HFOptions`` not marked ``TRANSPORT_MARK`` nor kept out as ``KEEP_ANSWERS`` is named where it is
# not at its default, in the words identities were written with before.
ANSWERING = {"trust_remote_code": True, "prefix_reuse": False, "continuous_batching": False, "kv_cache": "static",
             "packed_linears": False, "system_turn": "fold", "dtype": "bfloat16", "top_p": 0.9, "top_k": 5,
             "packing": True}
"""Each option that may change answers → a value other than its default that this CPU can build."""
ELSEWHERE = {"device": "a GPU", "max_memory": "GPUs to spread over (device=auto)",
             "adapter": "an adapter's files (tests/models/hf/test_adapters.py)"}
"""Options that change answers only with what a CPU test has not: what each needs."""
TRANSPORT = {"batch_tokens": 100, "max_batch": 3, "threads": 2}
KEPT = {"rescore_fragile": "float32", "calibrate": True}


def _identity(tmp_path: Path, **options: object) -> dict[str, str]:
    if not (tmp_path / "model.safetensors").exists():
        shard(tmp_path / "model.safetensors", "weights")
    return load_backend(f"hf:{tmp_path}", options).identity


def test_every_option_is_classed_as_changing_answers_or_not() -> None:
    from lingdiag.models.hf.options import HFOptions

    marked = {n for n, f in HFOptions.model_fields.items()
              if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("transport")}
    assert set(TRANSPORT) == marked and set(KEPT) == HFOptions.KEEP_ANSWERS
    assert {*ANSWERING, *ELSEWHERE, *TRANSPORT, *KEPT} == set(HFOptions.model_fields)


def test_an_option_changing_answers_changes_the_cache_key_and_a_transport_option_does_not(tmp_path: Path) -> None:
    from lingdiag.models.cache import ResponseCache
    from lingdiag.records import LoglikelihoodRequest

    request = LoglikelihoodRequest(context="The cat", continuation=" sat")
    default = _identity(tmp_path)
    # Identities of runs that leave every option alone are as they were written.
    assert sorted(default) == ["backend", "model", "path", "weights_sha256"]
    key = ResponseCache.key(default, request)
    for name, value in ANSWERING.items():
        changed = _identity(tmp_path, **{name: value})
        assert changed != default and ResponseCache.key(changed, request) != key, name
    for name, value in {**TRANSPORT, **KEPT}.items():
        assert _identity(tmp_path, **{name: value}) == default, name
    # In the words written before the identity was derived (their cache keys stay valid).
    assert {k: v for k, v in _identity(tmp_path, top_p=0.9, top_k=5, packing=True, kv_cache="static",
                                       system_turn="fold").items() if k not in default} == \
        {"top_p": "0.9", "top_k": "5", "packing": "on", "kv_cache": "static", "system_turn": "fold"}
    assert _identity(tmp_path, packing="auto")["packing"] == "auto"
    assert _identity(tmp_path, prefix_reuse=False)["prefix_reuse"] == "False"
