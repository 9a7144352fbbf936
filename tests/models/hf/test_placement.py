"""Placement resolution (pure, for CPU and CUDA machines alike) and the CPU identity it must keep."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lingdiag.errors import ConfigError
from lingdiag.models.hf import HFOptions
from lingdiag.models.hf.placement import CALL_TOKENS, GPU_HEAD_CHUNK, HEAD_CHUNK, Machine, Placement, resolve
from lingdiag.models.providers import load_backend

CPU = Machine(cpus=3)
ONE_GPU = Machine(cpus=8, cuda_devices=1, cuda_bf16=True, torch_version="2.11.0+cu130")
TWO_OLD_GPUS = Machine(cpus=8, cuda_devices=2, cuda_bf16=False)


def test_cpu_is_the_default_and_keeps_every_lever() -> None:
    p = resolve(machine=CPU)
    assert p == Placement(kind="cpu", device_map=None, dtype="float32", threads=3, packed_linears=True,
                          batch_tokens=None, max_batch=256, head_chunk=HEAD_CHUNK, call_tokens=CALL_TOKENS)
    assert p.cpu_levers and p.identity == {} and p.load_kwargs() == {} and not p.sized_from_memory
    assert [p.tokens(kind, _unused) for kind in ("generate", "loglik", "plain")] == [4096, 2048, 2048]
    assert p.name("smollm2-135m") == "smollm2-135m"


def _unused() -> object:
    raise AssertionError("the model is loaded only to size a budget from device memory")


def test_threads_default_to_the_cpus_this_process_may_use() -> None:
    assert resolve().threads == len(os.sched_getaffinity(0))
    assert resolve(threads=1).threads == 1


def test_the_thread_choice_is_said_with_how_to_change_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The default stays the usable CPUs (the same numbers on a busy machine as on a quiet one);
    # a busy machine gets the hint that one thread is often faster.
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert resolve(machine=CPU).describe_threads() == "3 torch thread(s); change with --model-option threads=N"
    monkeypatch.setattr(os, "getloadavg", lambda: (6.5, 6.0, 5.0))
    assert resolve(machine=CPU).describe_threads().endswith(
        "(the machine's load is 6.5: threads=1 is often several times faster)")
    assert "load" not in resolve(threads=1, machine=CPU).describe_threads()
    assert resolve(device="cuda", machine=ONE_GPU).describe_threads() == "on cuda"


def test_auto_without_cuda_is_the_cpu() -> None:
    assert resolve(device="auto", machine=CPU) == resolve(machine=CPU)


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_without_cuda_is_a_one_line_error(device: str) -> None:
    with pytest.raises(ConfigError, match=f"device={device}: no CUDA device here") as e:
        resolve(device=device, machine=CPU)
    assert "\n" not in str(e.value)


def test_one_gpu_resolves_to_bf16_without_cpu_levers() -> None:
    p = resolve(device="cuda", machine=ONE_GPU)
    assert (p.kind, p.device_map, p.dtype, p.packed_linears, p.cpu_levers) == ("cuda", "cuda:0", "bfloat16",
                                                                               False, False)
    assert p.head_chunk == GPU_HEAD_CHUNK and p.load_kwargs() == {"device_map": "cuda:0"} and p.sized_from_memory
    assert p.call_tokens is None  # a GPU pads almost for free: one pass per tree level
    assert resolve(device="cuda", batch_tokens=9000, machine=ONE_GPU).tokens("plain", _unused) == 9000
    assert p.identity == {"dtype": "bfloat16", "device": "cuda"}
    assert p.name("smollm2-135m") == "smollm2-135m-bfloat16-cuda"
    # float32 asked on CUDA: only the device is named.
    assert resolve(device="cuda", dtype="float32", machine=ONE_GPU).name("m") == "m-cuda"


def test_gpu_index_auto_and_old_gpus() -> None:
    assert resolve(device="cuda:1", machine=TWO_OLD_GPUS).device_map == "cuda:1"
    with pytest.raises(ConfigError, match=r"only 2 CUDA device\(s\) visible"):
        resolve(device="cuda:2", machine=TWO_OLD_GPUS)
    spread = resolve(device="auto", machine=TWO_OLD_GPUS)
    assert (spread.device_map, spread.dtype) == ("auto", "float16")  # no bf16 on the GPU
    assert spread.identity == {"dtype": "float16", "device": "cuda", "device_map": "auto"}


def test_bfloat16_mixed_is_refused_on_cuda_in_one_line() -> None:
    with pytest.raises(ConfigError, match="bfloat16-mixed is a CPU mode") as e:
        resolve(device="cuda", dtype="bfloat16-mixed", machine=ONE_GPU)
    assert "\n" not in str(e.value)
    assert resolve(dtype="bfloat16-mixed", machine=CPU).packed_linears


def test_cpu_levers_apply_on_the_cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv("TRANSFORMERS_SDPA_FORCE_GQA", raising=False)
    threads = torch.get_num_threads()
    gpu = resolve(device="cuda", machine=ONE_GPU)
    gpu.before_load()
    assert "TRANSFORMERS_SDPA_FORCE_GQA" not in os.environ and torch.get_num_threads() == threads
    try:
        resolve(threads=1, machine=CPU).before_load()
        assert os.environ["TRANSFORMERS_SDPA_FORCE_GQA"] == "1" and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)


def test_triton_is_blocked_before_torch_on_the_cpu_only() -> None:
    probe = ("import sys; from lingdiag.models.hf.placement import Machine, resolve; "
             "resolve(device=sys.argv[1], machine=Machine(cpus=1, cuda_devices=1, cuda_bf16=True)).before_torch(); "
             "print('triton' in sys.modules and sys.modules['triton'] is None)")
    blocked = {d: subprocess.run([sys.executable, "-c", probe, d], capture_output=True, text=True, check=True).stdout
               for d in ("cpu", "cuda")}
    assert blocked == {"cpu": "True\n", "cuda": "False\n"}


def test_options_reach_the_placement() -> None:
    p = HFOptions(batch_tokens=512, max_batch=8, threads=2, packed_linears=False, dtype="bfloat16").placement()
    assert (p.tokens("generate", _unused), p.tokens("loglik", _unused), p.max_batch, p.threads, p.packed_linears,
            p.dtype) == (512, 512, 8, 2, False, "bfloat16")
    with pytest.raises(ConfigError, match="the embedded backend: device: String should match pattern") as e:
        load_backend("smollm2-135m", {"device": "gpu"})
    assert "\n" not in str(e.value)


def test_cpu_identity_is_as_before_placement() -> None:
    """The identity (so meta.json and every cache key) of the embedded model on the CPU: exactly
    the keys it had before ``device`` existed, and ``dtype`` only when asked for."""
    backend = load_backend("smollm2-135m")
    identity = backend.identity
    assert list(identity) == ["backend", "model", "path", "weights_sha256", "n_params"]
    assert (identity["backend"], identity["model"], identity["n_params"]) == ("hf", "smollm2-135m", "134515008")
    half = load_backend("smollm2-135m", {"dtype": "bfloat16"}).identity
    assert half == {**identity, "model": "smollm2-135m-bfloat16", "dtype": "bfloat16"}
    assert list(half) == ["backend", "model", "path", "weights_sha256", "dtype", "n_params"]
    assert load_backend("smollm2-135m", {"device": "auto"}).identity == identity  # no GPU here


@pytest.mark.slow
def test_device_cuda_without_cuda_is_a_one_line_cli_error() -> None:
    import torch

    assert not torch.cuda.is_available(), "this test is about a machine without CUDA"
    done = subprocess.run([sys.executable, "-m", "lingdiag", "run", "imperfective", "--model", "smollm2-135m",
                           "--dataset", "builtin", "--limit", "1", "--model-option", "device=cuda"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "device=cuda: no CUDA device here" in lines[0], done.stderr


def test_max_memory_needs_device_auto_and_reaches_from_pretrained() -> None:
    with pytest.raises(ConfigError, match="max_memory spreads a model over devices: it needs device=auto"):
        resolve(device="cuda", max_memory={"0": "20GiB"}, machine=ONE_GPU)
    p = resolve(device="auto", max_memory={"cpu": "64GiB", "0": "20GiB"}, machine=TWO_OLD_GPUS)
    assert p.load_kwargs() == {"device_map": "auto", "max_memory": {0: "20GiB", "cpu": "64GiB"}}


def test_max_memory_in_bytes_reaches_accelerate_in_a_format_it_accepts() -> None:
    """Issue 39: a bare number string (``"26347776"``) made accelerate refuse the cap; bytes travel as an int."""
    from accelerate.utils import convert_file_size_to_int

    p = resolve(device="auto", max_memory={"0": "26347776", "cpu": "8GiB"}, machine=TWO_OLD_GPUS)
    caps = p.load_kwargs()["max_memory"]
    assert caps == {0: 26347776, "cpu": "8GiB"}
    assert [convert_file_size_to_int(v) for v in caps.values()] == [26347776, 8 * 2**30]


@pytest.mark.slow
def test_a_device_map_gives_the_results_of_one_device() -> None:
    """``device_map="auto"`` and ``max_memory`` through ``from_pretrained`` and accelerate: the same
    answers as the plain CPU placement. On a machine without GPUs every layer lands on the CPU, so the
    per-layer index moves run as no-ops; ``bench/gpu.py`` splits a model across a GPU and the CPU."""
    from dataclasses import replace

    from lingdiag.models.embedded import ensure_converted
    from lingdiag.models.hf import HFBackend
    from lingdiag.records import GenerationRequest, LoglikelihoodRequest

    path = str(ensure_converted("smollm2-135m")[0])
    plain = resolve(packed_linears=False)
    mapped = replace(plain, device_map="auto", max_memory=(("cpu", "8GiB"),))
    prompts = [GenerationRequest(prompt=p, max_new_tokens=6) for p in ("The cat sat", "Once upon a time, there",
                                                                       "The cat sat on the")]
    scored = [LoglikelihoodRequest("The cat sat on the", x) for x in (" mat", " moon", " mat and slept")]
    answers = {}
    for name, placement in (("plain", plain), ("mapped", mapped)):
        backend = HFBackend(path, placement=placement)
        answers[name] = (backend.generate(prompts), backend.loglikelihood(scored))
    assert answers["mapped"] == answers["plain"]


def test_the_similarity_encoder_takes_the_same_devices() -> None:
    from lingdiag.suites.imperfective.similarity import load_encoder

    with pytest.raises(ConfigError, match="--device gpu: expected cpu, cuda, cuda:N or auto"):
        load_encoder("smollm2-135m", "gpu")
    with pytest.raises(ConfigError, match="device=cuda: no CUDA device here"):
        load_encoder("smollm2-135m", "cuda")


@pytest.mark.slow
def test_the_similarity_encoder_on_auto_is_the_cpu_without_a_gpu() -> None:
    from lingdiag.suites.imperfective.similarity import load_encoder

    assert load_encoder("smollm2-135m", "auto").model.device.type == "cpu"  # no GPU here


@pytest.mark.slow
def test_cpu_usage_has_no_gpu_memory(smollm2: object) -> None:
    from lingdiag.records import LoglikelihoodRequest

    smollm2.loglikelihood([LoglikelihoodRequest("The cat", " sat")])  # type: ignore[attr-defined]
    assert "peak_gpu_mb" not in smollm2.usage()  # type: ignore[attr-defined]


def _tiny_cpu_model() -> object:
    """A two-layer random Llama, every weight (the LM head included) on the CPU."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, intermediate_size=64, vocab_size=128)).eval()


@pytest.mark.parametrize("kind", ["loglik", "generate", "plain"])
def test_a_cpu_head_under_a_cuda_placement_is_sized_as_the_cpu(kind: str) -> None:
    """Crash 1 of issue 39: ``device_map="auto"`` with the LM head offloaded to the CPU sized the batch
    with CUDA's memory query on the CPU device (``ValueError: Expected a cuda device, but got: cpu``).
    The budget follows the device that holds the head: the CPU's measured constants."""
    from dataclasses import replace

    from lingdiag.models.hf.placement import GEN_BATCH_TOKENS, LOGLIK_BATCH_TOKENS

    model = _tiny_cpu_model()
    placement = replace(resolve(), kind="cuda", device_map="auto")
    assert placement.tokens(kind, lambda: model) == (GEN_BATCH_TOKENS if kind == "generate"  # type: ignore[arg-type]
                                                     else LOGLIK_BATCH_TOKENS)


@pytest.mark.slow
def test_a_head_offloaded_by_accelerate_scores_as_on_one_device() -> None:
    """Seen on an H100: ``device_map="auto"`` past the card's memory leaves the LM head's weights on
    ``meta`` with accelerate's hook to bring them in at each call, and the scoring tree, which applies the
    head outside the model's forward, read the ``meta`` weight (``Tensor on device meta is not on the
    expected device cuda:0``). ``cpu_offload`` makes the same hooked head here: the answers equal the
    unhooked model's, through the tree and in generation."""
    import copy

    import torch
    from accelerate import cpu_offload
    from transformers import LlamaConfig, LlamaForCausalLM

    from lingdiag.models.embedded import ensure_converted
    from lingdiag.models.hf import HFBackend
    from lingdiag.records import GenerationRequest, LoglikelihoodRequest

    path = str(ensure_converted("smollm2-135m")[0])
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                         num_key_value_heads=2, intermediate_size=64, vocab_size=49152,
                                         tie_word_embeddings=False)).eval()
    offloaded = copy.deepcopy(model)
    cpu_offload(offloaded.lm_head, execution_device=torch.device("cpu"))
    assert offloaded.lm_head.weight.device.type == "meta"
    scored = [LoglikelihoodRequest("The cat sat on the", x) for x in (" mat", " moon", " mat and slept")]
    prompts = [GenerationRequest(prompt="The cat sat", max_new_tokens=4)]
    answers = [(b.loglikelihood(scored), b.generate(prompts))
               for b in (HFBackend.from_model(m, path, resolve(packed_linears=False), name="tiny")
                         for m in (model, offloaded))]
    assert answers[1] == answers[0]
