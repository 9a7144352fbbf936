"""``lingdiag submit``: the same run unsharded and as 3 shards through submitit's local executor,
a local Ray cluster and (where ``sbatch`` exists) a real one-node SLURM job array, each merged
byte-identical; a shard killed mid-run is the only one that runs again.

The model is ``openai:`` against a stand-in server on 127.0.0.1 (conftest.py), one URL per shard
(``{shard}`` in the spec), so the server sees which shard sent what.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lingdiag.cluster import SubmitOptions, submit
from lingdiag.config import RunConfig
from lingdiag.engine.run import run

REPO = Path(__file__).resolve().parents[2]
RUN_ARGS = ["imperfective", "--strategy", "zero-shot,dap", "--limit", "12", "-o", "max_new_tokens=4",
            "--no-cache", "--model-option", "max_retries=0"]
BYTE_IDENTICAL = ("items.jsonl", "metrics.json", "table.md")


def unsharded(server, out: Path) -> Path:
    config = RunConfig(suite="imperfective", model=server.model("whole"), axes={"strategy": ["zero-shot", "dap"]},
                       limit=12, options={"max_new_tokens": 4}, model_options={"max_retries": 0})
    run(config, out, cache=False)
    return out


def lingdiag(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "lingdiag", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)  # type: ignore[call-overload]


def assert_same_run(merged: Path, whole: Path) -> None:
    for name in BYTE_IDENTICAL:
        assert (merged / name).read_bytes() == (whole / name).read_bytes(), name


def submit_cli(server, out: Path, executor: str, *extra: str,
               run_args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lingdiag", "submit", "--executor", executor, "--shards", "3",
                           *extra, "--", *RUN_ARGS, *run_args, "--model", server.model("s{shard}"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)


def test_local_executor_merges_byte_identical(fake_server, tmp_path):
    whole = unsharded(fake_server, tmp_path / "whole")
    proc = submit_cli(fake_server, tmp_path / "out", "local")
    assert proc.returncode == 0, proc.stderr
    assert_same_run(tmp_path / "out", whole)
    assert sorted(fake_server.counts) == ["/s1", "/s2", "/s3", "/whole"]  # each shard asked its own server
    assert sum(fake_server.counts[f"/s{k}"] for k in (1, 2, 3)) == fake_server.counts["/whole"] == 24
    assert (tmp_path / "out" / "shards" / "2-of-3" / "meta.json").exists()
    # Submitting again runs nothing and merges the same run.
    again = submit_cli(fake_server, tmp_path / "out", "local")
    assert again.returncode == 0, again.stderr
    assert "already finished, not submitted: shards 1/3, 2/3, 3/3" in again.stderr
    assert sum(fake_server.counts[f"/s{k}"] for k in (1, 2, 3)) == 24
    assert_same_run(tmp_path / "out", whole)


def test_killed_shard_is_the_only_one_resubmitted(fake_server, tmp_path):
    whole = unsharded(fake_server, tmp_path / "whole")
    out = tmp_path / "out"
    # Shard 2 answers its first chunk (2 items), then hangs: the whole submission is killed then.
    fake_server.hold = lambda prefix, n: prefix == "/s2" and n > 2
    chunks = ("--model-option", "concurrency=2", "--config", str(write_chunks(tmp_path)))
    proc = lingdiag("submit", "--executor", "local", "--shards", "3", "--", *RUN_ARGS, *chunks,
                    "--model", fake_server.model("s{shard}"), "--out", str(out))
    shard2 = out / "shards" / "2-of-3" / "items.jsonl"
    deadline = time.monotonic() + 300
    while not (shard2.exists() and shard2.read_text().count("\n") >= 2
               and all((out / "shards" / f"{k}-of-3" / "metrics.json").exists() for k in (1, 3))):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the submitter and every job it started
    proc.communicate()
    assert not (out / "metrics.json").exists() and not (out / "shards" / "2-of-3" / "metrics.json").exists()
    recorded = shard2.read_text().count("\n")
    fake_server.hold = lambda prefix, n: False
    fake_server.released.set()
    before = dict(fake_server.counts)
    # Jobs start Python through --python (as with `apptainer exec … python`): here a script that leaves a mark.
    wrapper = tmp_path / "py.sh"
    wrapper.write_text(f'#!/bin/sh\ntouch "{tmp_path}/wrapped"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    again = submit_cli(fake_server, out, "local", "--python", str(wrapper), run_args=chunks)
    assert again.returncode == 0, again.stderr
    assert "already finished, not submitted: shards 1/3, 3/3" in again.stderr
    assert "submitted shard 2/3" in again.stderr and (tmp_path / "wrapped").exists()
    assert fake_server.counts["/s1"] == before["/s1"] and fake_server.counts["/s3"] == before["/s3"]
    # Shard 2 resumed: only the items it had not recorded reached the server.
    total2 = (out / "shards" / "2-of-3" / "items.jsonl").read_text().count("\n")
    assert fake_server.counts["/s2"] - before["/s2"] == total2 - recorded
    assert_same_run(out, whole)


def write_chunks(tmp_path: Path) -> Path:
    """A config file with 2-item chunks, so that a shard records its progress in small steps."""
    path = tmp_path / "chunks.yaml"
    path.write_text("suite: imperfective\nmodel: x\nchunk_items: 2\n")
    return path


@pytest.mark.slow
def test_ray_local_cluster_with_two_workers(fake_server, tmp_path):
    ray = pytest.importorskip("ray")
    whole = unsharded(fake_server, tmp_path / "whole")
    config = RunConfig(suite="imperfective", model=fake_server.model("s{shard}"),
                       axes={"strategy": ["zero-shot", "dap"]}, limit=12, options={"max_new_tokens": 4},
                       model_options={"max_retries": 0})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        result = submit(config, tmp_path / "out", SubmitOptions(shards=3, executor="ray", cache=False))
    finally:
        ray.shutdown()
    assert {o.error for o in result.outcomes.values()} == {None}, result.outcomes
    assert result.merged is not None
    assert_same_run(result.merged.out, whole)
    assert sum(fake_server.counts[f"/s{k}"] for k in (1, 2, 3)) == 24


@pytest.mark.slow
def test_slurm_job_array(fake_server, tmp_path):
    """A real job array on a one-node SLURM (scripts/slurm-single-node.sh starts it; needs root)."""
    if shutil.which("sbatch") is None:
        pytest.skip("no SLURM here (sbatch absent): apt-get install slurm-wlm munge")
    if subprocess.run(["sinfo"], capture_output=True).returncode != 0:
        subprocess.run(["bash", str(REPO / "scripts" / "slurm-single-node.sh")], check=True, timeout=120)
    whole = unsharded(fake_server, tmp_path / "whole")
    proc = submit_cli(fake_server, tmp_path / "out", "slurm", "--time", "10")
    assert proc.returncode == 0, proc.stderr
    assert_same_run(tmp_path / "out", whole)
    # One array: job ids ARRAYID_0..2 of one submission.
    ids = [line.rsplit(" ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("submitted shard")]
    assert len({i.split("_")[0] for i in ids}) == 1 and sorted(i.split("_")[1] for i in ids) == ["0", "1", "2"]
