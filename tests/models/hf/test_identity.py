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
