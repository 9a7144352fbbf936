"""LoRA adapters on the embedded SmolLM2-135M: in the identity, resumable after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import load_as

from lingdiag.adapt.examples import chat_examples
from lingdiag.adapt.lora import CHECKPOINT, LoraPlan, train
from lingdiag.models.cache import ResponseCache
from lingdiag.models.hf import HFBackend
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.suites.imperfective.data import builtin_items

TRAIN = """
import sys
from pathlib import Path
from lingdiag.adapt.examples import chat_examples
from lingdiag.adapt.lora import LoraPlan, train
from lingdiag.models.providers import load_backend
from lingdiag.suites.imperfective.data import builtin_items
examples = chat_examples("imperfective", builtin_items()[::50], "zero-shot")
train(load_backend("smollm2-135m").loaded, examples, LoraPlan(steps=int(sys.argv[2]), rank=2, batch_size=2),
      Path(sys.argv[1]), lambda done, total: print("step", done, flush=True))
"""


@pytest.fixture(scope="module")
def one_step(smollm2: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lora") / "adapter"
    examples = chat_examples("imperfective", builtin_items()[::100], "zero-shot")
    train(smollm2.loaded, examples, LoraPlan(steps=1, rank=2, batch_size=2), out)  # type: ignore[attr-defined]
    return out


@pytest.mark.slow
def test_one_step_lora_changes_identity_and_cache_key(one_step: Path) -> None:
    base = load_backend("smollm2-135m")
    adapted = load_backend(f"smollm2-135m+lora:{one_step}")
    ident = adapted.identity
    assert ident["adapter"] == "lora" and ident["lora_rank"] == "2" and ident["lora_targets"] == "q_proj,v_proj"
    assert ident["model"].startswith("smollm2-135m+lora-")
    request = GenerationRequest(messages=(ChatMessage("user", "Hi"),))
    assert ResponseCache.key(base.identity, request) != ResponseCache.key(ident, request)
    plan = json.loads((one_step / "plan.json").read_text(encoding="utf-8"))
    assert plan["steps"] == 1 and len(plan["data_sha256"]) == 64


@pytest.mark.slow
def test_one_step_lora_runs_merged(one_step: Path) -> None:
    """The merged adapter serves generation; one step at lr 2e-4 moves the weights a little."""
    request = GenerationRequest(messages=(ChatMessage("user", "Say yes."),), max_new_tokens=4)
    adapted = load_as(HFBackend, f"smollm2-135m+lora:{one_step}")
    assert adapted.generate([request])[0].error is None
    base_q = load_as(HFBackend, "smollm2-135m").model.get_decoder().layers[0].self_attn.q_proj
    adapted_q = adapted.model.get_decoder().layers[0].self_attn.q_proj
    assert repr(type(base_q)) == repr(type(adapted_q))  # merged: the plain (packed) linear, no LoRA wrapper


@pytest.mark.slow
def test_training_resumes_after_kill_9(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": "0"}
    # The reference runs under another string-hash seed, one that orders peft's set of target
    # modules the other way: the adapter's bytes may not depend on it.
    ref_env = {**env, "PYTHONHASHSEED": "3"}
    order = "print(list({'q_proj', 'v_proj'}))"
    assert len({subprocess.run([sys.executable, "-c", order], env=e, capture_output=True, text=True,
                               check=True).stdout for e in (env, ref_env)}) == 2
    steps = "3"  # killed after its first checkpoint, resumed for the rest: three steps show both
    subprocess.run([sys.executable, "-c", TRAIN, str(tmp_path / "ref"), steps], check=True, env=ref_env,
                   capture_output=True, timeout=600)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", TRAIN, str(out), steps], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not (out / CHECKPOINT).is_file() and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reached = json.loads((out / CHECKPOINT).read_text(encoding="utf-8"))["step"]
    assert reached < int(steps) and not (out / "adapter_model.safetensors").exists()
    resumed = subprocess.run([sys.executable, "-c", TRAIN, str(out), steps], check=True, env=env,
                             capture_output=True, text=True, timeout=600)
    # It continued after the checkpoint, and ends where the uninterrupted run ended, byte for byte.
    assert resumed.stdout.split("\n")[0] == f"step {reached + 1}"
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()
