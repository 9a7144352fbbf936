"""An ``hf:`` hub id on an offline node: one line at once, naming HF_HUB_OFFLINE and local
directories, not the hub client's minute of retries and a multi-line message."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from helpers import lingdiag

RETRIES_SECONDS = 30
"""The hub client's retries of one file alone take 1+2+4+8+8 s; a run that ends sooner did not retry."""


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_offline(tmp_path: Path, **env: str) -> tuple[float, str, int]:
    start = time.monotonic()
    proc = lingdiag(tmp_path, "run", "imperfective", "--model", "hf:someorg/somemodel", "--strategy", "zero-shot",
                    "--limit", "1", "--out", "run", env={"HF_HOME": str(tmp_path / "hf"), **env})
    return time.monotonic() - start, proc.stderr, proc.returncode


def test_an_unreachable_hub_fails_at_once_in_one_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    seconds, err, rc = run_offline(tmp_path, HF_ENDPOINT=endpoint)
    assert rc == 2 and seconds < RETRIES_SECONDS, (seconds, err)
    assert err.count("\n") == 1 and "\\n" not in err and "Retry" not in err, err
    assert err.startswith(f"error: cannot reach the Hugging Face hub at {endpoint} (Connection refused) and "
                          f"'someorg/somemodel' is not in the hub cache {tmp_path / 'hf' / 'hub'}")
    assert "--model hf:/path/to/dir" in err and "HF_HUB_OFFLINE=1" in err


def test_hf_hub_offline_without_the_model_cached_fails_in_one_line(tmp_path: Path) -> None:
    seconds, err, rc = run_offline(tmp_path, HF_HUB_OFFLINE="1")
    assert rc == 2 and seconds < RETRIES_SECONDS, (seconds, err)
    assert err.count("\n") == 1 and "and HF_HUB_OFFLINE is set" in err and "--model hf:/path/to/dir" in err, err


def test_a_malformed_hub_id_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    proc = lingdiag(tmp_path, "run", "imperfective", "--model", "hf:a/b\x1b[31m", "--limit", "1", "--out", "run",
                    env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "'a/b\\x1b[31m' is neither a model directory nor a hub id" in proc.stderr and "\x1b" not in proc.stderr


def test_the_hub_is_asked_before_torch_or_transformers_are_imported(tmp_path: Path) -> None:
    # Importing torch takes seconds on a loaded machine; an offline node must not pay for it to fail.
    seconds, err, rc = run_offline(tmp_path, HF_HUB_OFFLINE="1", PYTHONPROFILEIMPORTTIME="1")
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert rc == 2 and "and HF_HUB_OFFLINE is set" in err, err
    assert "huggingface_hub" in imported and "lingdiag.models.hf.hub" in imported, sorted(imported)[:20]
    assert not {"torch", "transformers"} & imported, seconds
