"""``hf:ID@REVISION``: the revision resolved to its hub commit, both ``from_pretrained`` calls made at
that commit, the commit in ``meta.json``'s model part and the cache key; a local directory keeps its
identity. The hub is a real HTTP server on 127.0.0.1 (``HF_ENDPOINT``) serving the hub's revision
API and file downloads of two tiny checkpoints saved with ``save_pretrained``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from lingdiag.errors import BackendError, ConfigError
from lingdiag.models.hf.checkpoint import resolve_revision

REPO = Path(__file__).resolve().parents[3]
SUITE = REPO / "examples" / "suites" / "agreement-regions.yaml"
_REVISION_API = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/revision/(?P<rev>[^/?]+)")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>[^?]+)")


@dataclass
class Hub:
    """Revisions of one repository: name (and commit) → (commit, saved directory); what was asked."""

    repo: str
    revisions: dict[str, tuple[str, Path]]
    asked: list[str] = field(default_factory=list)

    def find(self, repo: str, rev: str) -> tuple[str, Path] | None:
        by_commit = {c: (c, d) for c, d in self.revisions.values()}
        return (self.revisions.get(rev) or by_commit.get(rev)) if repo == self.repo else None


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for k, v in {"Content-Length": str(len(body)), **headers}.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            hub.asked.append(f"{self.command} {self.path}")
            if m := _REVISION_API.match(self.path):
                found = hub.find(unquote(m["repo"]), unquote(m["rev"]))
                if found is None:
                    return self._send(404, b"{}", {"X-Error-Code": "RevisionNotFound"})
                files = [{"rfilename": p.name} for p in sorted(found[1].iterdir())]
                body = json.dumps({"id": hub.repo, "sha": found[0], "siblings": files}).encode()
                return self._send(200, body, {"Content-Type": "application/json"})
            if m := _RESOLVE.match(self.path):
                found = hub.find(unquote(m["repo"]), unquote(m["rev"]))
                path = found[1] / unquote(m["file"]) if found else None
                if found is None or path is None or not path.is_file():
                    return self._send(404, b"", {"X-Error-Code": "EntryNotFound",
                                                 **({"X-Repo-Commit": found[0]} if found else {})})
                body = path.read_bytes()
                return self._send(200, body, {"X-Repo-Commit": found[0],
                                              "ETag": f'"{hashlib.sha256(body).hexdigest()}"'})
            return self._send(404, b"", {"X-Error-Code": "EntryNotFound"})

        do_HEAD = do_GET

    return Handler


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two tiny llama checkpoints (other random weights) with the embedded SmolLM2's tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from lingdiag.models.embedded import ensure_converted

    tokenizer = AutoTokenizer.from_pretrained(ensure_converted("smollm2-135m")[0])
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    saved = {}
    for seed, step in enumerate(("step100", "step200")):
        torch.manual_seed(seed)
        saved[step] = target = tmp_path_factory.mktemp(step)
        LlamaForCausalLM(config).save_pretrained(target)
        tokenizer.save_pretrained(target)
    return saved


@contextmanager
def serving(hub: Hub) -> Iterator[str]:
    """The stand-in hub on 127.0.0.1; yields its endpoint (``HF_ENDPOINT``)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _hub(dirs: dict[str, Path]) -> Hub:
    return Hub("org/tiny", {step: (hashlib.sha1(step.encode()).hexdigest(), d) for step, d in dirs.items()})


def _run(model: str, out: Path, env: dict[str, str]) -> dict[str, Any]:
    """``lingdiag run`` of the agreement suite file on ``model``; its meta.json and its records' outputs."""
    done = subprocess.run([sys.executable, "-m", "lingdiag", "run", str(SUITE), "--model", model, "--limit", "3",
                           "--out", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    return {"meta": json.loads((out / "meta.json").read_text()), "outputs": [r["outputs"] for r in records]}


@pytest.mark.slow
def test_hub_revision_reaches_from_pretrained_and_meta(checkpoints: dict[str, Path], tmp_path: Path) -> None:
    stand_in = _hub(checkpoints)
    with serving(stand_in) as endpoint:
        _revisions_reach_the_run(stand_in, endpoint, checkpoints, tmp_path)


def _revisions_reach_the_run(stand_in: Hub, endpoint: str, checkpoints: dict[str, Path], tmp_path: Path) -> None:
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = {step: _run(f"hf:org/tiny@{step}", tmp_path / step, env) for step in ("step100", "step200")}
    for step, done in runs.items():
        commit = stand_in.revisions[step][0]
        assert done["meta"]["model"]["revision"] == commit
        assert done["meta"]["model"]["model"] == f"org/tiny@{step}"
        assert done["meta"]["config"]["model"] == f"hf:org/tiny@{step}"
        # Model and tokenizer were fetched at the resolved commit, never at the moving name.
        fetched = [a for a in stand_in.asked if "/resolve/" in a]
        assert any(f"/resolve/{commit}/config.json" in a for a in fetched)
        assert any(f"/resolve/{commit}/model.safetensors" in a for a in fetched)
        assert any(f"/resolve/{commit}/tokenizer" in a for a in fetched)
    assert not any(f"/resolve/{step}/" in a for a in stand_in.asked for step in runs)
    # Same cache for both: the commit in the cache key keeps step200 from step100's answers.
    assert runs["step100"]["outputs"] != runs["step200"]["outputs"]
    # The hub's step100 is the directory saved as step100, which keeps an identity without a revision.
    local = _run(f"hf:{checkpoints['step100']}", tmp_path / "local", env)
    assert local["outputs"] == runs["step100"]["outputs"]
    assert "revision" not in local["meta"]["model"]
    assert local["meta"]["model"]["model"] == str(checkpoints["step100"])


def test_unknown_revision_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    stand_in = _hub({"step100": tmp_path})
    with serving(stand_in) as endpoint:
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        assert resolve_revision("org/tiny", "step100").commit == stand_in.revisions["step100"][0]
        with pytest.raises(BackendError, match=r"hf:org/tiny@step999: cannot resolve the revision on the hub") as e:
            resolve_revision("org/tiny", "step999")
    assert "\n" not in str(e.value)


def test_a_commit_needs_no_hub(tmp_path: Path) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert resolve_revision("org/tiny", commit).commit == commit
    with pytest.raises(ConfigError, match="local directory, which has no revisions"):
        resolve_revision(str(tmp_path), "main")


def _cache(hf_home: Path, refs: dict[str, tuple[str, Path | None]]) -> None:
    """A hub cache as huggingface_hub lays it out: ``hub/models--org--tiny/refs/NAME`` holding a commit,
    ``snapshots/COMMIT/`` holding the files (copied from a saved directory, or a bare ``config.json``)."""
    import shutil

    repo = hf_home / "hub" / "models--org--tiny"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    for name, (commit, saved) in refs.items():
        (repo / "refs" / name).write_text(commit)
        snapshot = repo / "snapshots" / commit
        if saved is None:
            snapshot.mkdir(parents=True, exist_ok=True)
            (snapshot / "config.json").write_text("{}")
        else:
            shutil.copytree(saved, snapshot, dirs_exist_ok=True)


def test_offline_a_branch_resolves_from_the_cache_refs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    commit, bare = hashlib.sha1(b"step100").hexdigest(), hashlib.sha1(b"step200").hexdigest()
    _cache(tmp_path, {"step100": (commit, None), "step200": (bare, None)})
    (tmp_path / "hub" / "models--org--tiny" / "snapshots" / bare / "config.json").unlink()  # a ref never downloaded
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_revision("org/tiny", "step100").commit == commit
    for missing in ("step200", "step999"):
        with pytest.raises(BackendError, match=rf"hf:org/tiny@{missing}: offline \(HF_HUB_OFFLINE=1\) and the hub "
                                               "cache .* holds no snapshot of this revision") as e:
            resolve_revision("org/tiny", missing)
        assert "\n" not in str(e.value)


@pytest.mark.slow
def test_offline_run_of_a_branch_names_its_commit(checkpoints: dict[str, Path], tmp_path: Path) -> None:
    """``hf:ID@BRANCH`` with ``HF_HUB_OFFLINE=1`` from a stand-in hub cache holding two branches: each run
    loads its own snapshot and ``meta.json`` names the commit its branch resolved to."""
    commits = {step: hashlib.sha1(step.encode()).hexdigest() for step in checkpoints}
    _cache(tmp_path / "hf", {step: (commits[step], d) for step, d in checkpoints.items()})
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9",
           "LINGDIAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = {step: _run(f"hf:org/tiny@{step}", tmp_path / step, env) for step in checkpoints}
    for step, done in runs.items():
        assert done["meta"]["model"]["revision"] == commits[step]
        assert done["meta"]["model"]["model"] == f"org/tiny@{step}"
    assert runs["step100"]["outputs"] != runs["step200"]["outputs"]
    local = _run(f"hf:{checkpoints['step200']}", tmp_path / "local", env)
    assert local["outputs"] == runs["step200"]["outputs"]  # the snapshot is the saved directory's weights
