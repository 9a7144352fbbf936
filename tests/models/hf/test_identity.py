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
