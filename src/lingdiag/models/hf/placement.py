"""Where the transformers backend runs: one frozen policy, resolved once from the options.

``Placement`` holds the device, the ``device_map`` handed to ``from_pretrained``, the resolved
dtype, the CPU threads, the batch budgets and whether the CPU levers apply; ``load``,
``forward``, ``decode`` and ``score`` read it and never re-derive any of it from flags.

The CPU levers (oneDNN weight packing, ``TRANSFORMERS_SDPA_FORCE_GQA``, the triton block, the
thread count) are CPU-only: each one breaks or slows CUDA (oneDNN reorders CPU weights only;
forcing grouped heads sends masked SDPA on CUDA to its math kernel; xgrammar's and inductor's
CUDA paths import triton).

On the CPU everything resolves as before placement existed: float32, no ``device_map``, and
an identity without ``device``, so model names, cache keys and records are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from lingdiag.errors import ConfigError

if TYPE_CHECKING:
    import torch

    from lingdiag.models.hf.memory import BatchKind

Dtype = Literal["float32", "bfloat16", "bfloat16-mixed", "float16"]
"""Weights and activations dtype. ``bfloat16-mixed`` loads float32 and computes only the
transformer body's matrix products in bfloat16 (``lingdiag.models.hf.linear``; CPU only).
float32 is the CPU's: on a CPU without native bf16/f16 dot products (AVX2 only) the half types
run several times slower, with them (AVX512-BF16, AMX) about twice as fast, and on any CPU they
move log-probs and, sometimes, decisions; ``make bench`` measures both on the machine at hand."""

NOISE_PER_TOKEN: dict[Dtype, float] = {"bfloat16": 0.1, "bfloat16-mixed": 0.1, "float16": 0.1}
"""Bound, in nats per scored token, on how far two texts of one decision move relative to each other
in this dtype against float32: a pair of texts of ``n_i + n_j`` scored tokens moves apart by at most
``0.1 × (n_i + n_j)`` (``lingdiag.metrics.fragile``). Measured with ``bench/fragile.py`` on
SmolLM2-135M on the CPU (bf16 against the same weights in float32, 2026-11-26): over the pairs of
ExpliCa perplexity texts of 16 and 24 items, |Δ_i − Δ_j| / (n_i + n_j) was at most 0.017 and 0.013
(|Δ_i − Δ_j| at most 0.59 nat), so 0.1 leaves about 6× headroom. A single text moves much more (up to
4.2 nats, 0.25 per token) but its shared prefix moves every text of the item alike, which no decision
sees. float16 (3 more mantissa bits) and bfloat16-mixed (float32 outside the body's products) round
less than bf16: they take its bound, unmeasured."""

DtypeOption = Dtype | Literal["auto"]
"""``auto``: float32 on the CPU, bfloat16 on CUDA (float16 on GPUs without bf16), as lm-eval's
``dtype="auto"`` gives GPU users."""

DEVICE_PATTERN = r"^(cpu|cuda|cuda:\d+|auto)$"
"""``--model-option device=``: ``cpu`` (default), ``cuda`` (the first visible GPU), ``cuda:N``,
or ``auto``: the layers spread over every visible GPU (``device_map="auto"``), the CPU when
there is none."""

Kind = Literal["cpu", "cuda"]

PackedAttention = Literal["dense", "blocks"]
"""How a packed pass's attention is computed (``Placement.packed_attention``)."""

GEN_BATCH_TOKENS = 4096
"""Default budget of a generation batch on the CPU, prompt plus new tokens per row: it bounds
the key/value cache (rows × tokens); larger batches decode more rows per step. Measured on
SmolLM2-135M (2 cores, 400 ImperfectiveNLI zero-shot prompts): 4,096 as fast as 8,192 with
~0.2 GB less peak memory, which keeps the peak below lm-eval's at batch 16."""
LOGLIK_BATCH_TOKENS = 2048
"""Default budget of a log-likelihood batch on the CPU. Measured on SmolLM2-135M (2 cores, the
4,800 ExpliCa requests): as fast as 8,192 (less padding) with ~0.2 GB less peak memory."""
HEAD_CHUNK = 64
"""Positions per LM-head chunk when scoring on the CPU: bounds the logits (64 × vocab floats,
12.6 MB on SmolLM2, below glibc's 32 MB mmap ceiling, so each chunk's logits reuse freed heap
pages instead of faulting in new ones). oneDNN runs the packed head as fast at 64 rows as at
256 (~205 GFLOP/s on 2 cores); measured on SmolLM2-135M over 1,600 ExpliCa requests, 64 rows
held the peak ~80 MB lower than 256 at the same speed."""
CALL_TOKENS = 128
"""What one more forward pass costs on the CPU, in padded tokens: the scoring tree's last level
splits its rows into passes of similar length where that saves more padding than this
(``batching.length_chunks``). Measured on SmolLM2-135M, 2 cores, BLiMP's 12,000 sentences
(``python bench/blimp.py --call-tokens none,32,128,512``): 73.0 s in one pass per level, 61.7 s at
32, 60.4 s at 128, 67.2 s at 512 (padded tokens 83,766 → 68,334 at 128)."""
GPU_HEAD_CHUNK = 2048
"""Positions per LM-head chunk on CUDA: the mmap ceiling is a CPU matter, and a GPU needs
thousands of rows to fill its matrix units (2,048 × 128k vocabulary in float32 is 1 GB)."""


@dataclass(frozen=True, slots=True)
class Machine:
    """What the resolution reads from the machine (``Machine.here``), passed in so that it stays a pure function."""

    cpus: int
    """CPUs this process may run on (``sched_getaffinity``: a SLURM allocation, not the host's cores)."""
    cuda_devices: int = 0
    """Visible CUDA devices."""
    cuda_bf16: bool = False
    """Whether the first CUDA device computes in bfloat16."""
    torch_version: str = ""
    """For the error when CUDA is asked for and absent."""

    @classmethod
    def here(cls, *, probe_cuda: bool) -> Machine:
        """This machine; torch is imported only when ``probe_cuda`` (a CUDA device was asked for)."""
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if not probe_cuda:
            return cls(cpus=cpus)
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return cls(cpus=cpus, cuda_devices=n, cuda_bf16=bool(n and torch.cuda.is_bf16_supported()),
                   torch_version=str(torch.__version__))


@dataclass(frozen=True, slots=True)
class Placement:
    """Where and how the transformers backend runs one model."""

    kind: Kind
    """``cpu`` or ``cuda``: which kernels compute (with ``device_map="auto"``, ``cuda`` even if
    some layers are offloaded to the CPU)."""
    device_map: str | None
    """``from_pretrained``'s ``device_map``: None on the CPU (as before placement existed),
    ``cuda:N`` for one GPU, ``auto`` to spread the layers over the visible GPUs."""
    dtype: Dtype
    """The resolved weights dtype (never ``auto``)."""
    threads: int
    """Torch intra-op threads, set on the CPU only."""
    packed_linears: bool
    """Whether the body's linear layers (and a float32 LM head) run on packed oneDNN weights."""
    batch_tokens: int | None
    """The user's padded-token budget per batch, for both request kinds (``--batch-tokens``); None:
    the device's (``tokens``)."""
    max_batch: int
    """Upper bound on rows per forward batch."""
    head_chunk: int
    """Positions per LM-head chunk when scoring."""
    call_tokens: int | None = None
    """What one more forward pass is worth in padded tokens when scoring (``CALL_TOKENS`` on the
    CPU); None, on CUDA: one pass per tree level, since a GPU pads rows almost for free while each
    pass launches every layer's kernels again (unmeasured there: no GPU was at hand)."""
    packed_attention: PackedAttention = "dense"
    """How a packed scoring pass attends (``packing``): ``dense``, a 4D boolean mask (the CPU: SDPA's CPU
    kernel, and FlexAttention there is an eager reference that computes every tile anyway), or ``blocks``,
    a block-sparse document mask under compiled FlexAttention that skips the tiles no token reads
    (CUDA: a pass then costs about the sum of its segments' squares, not the square of the pass)."""
    max_memory: tuple[tuple[str, str], ...] = ()
    """With ``device_map="auto"``: memory caps per device (``("0", "70GiB")``, ``("cpu", "200GiB")``);
    the layers that do not fit the GPUs are offloaded to the CPU. Empty: accelerate's defaults."""

    @property
    def sized_from_memory(self) -> bool:
        """Whether batch budgets are sized from the device's free memory at each call (CUDA, no ``batch_tokens``)."""
        return self.kind == "cuda" and self.batch_tokens is None

    def tokens(self, kind: BatchKind, model: Callable[[], Any]) -> int:
        """The padded-token budget of a ``kind`` batch.

        The user's ``batch_tokens``; else, when the LM head computes on the CPU (a CPU placement,
        or ``device_map="auto"`` offloading the last layers there), the CPU's measured constants;
        else sized now from the free memory of the GPU holding the head and what a token costs the
        model (``memory.budget_tokens``; the tree keeps room for a head chunk's logits). The head's
        device, not the placement's kind, decides: a CPU head has no CUDA memory to query.

        Args:
            kind: What the batch runs.
            model: Gives the loaded model; called only to size a budget from memory.
        """
        if self.batch_tokens is not None:
            return self.batch_tokens
        cpu_budget = GEN_BATCH_TOKENS if kind == "generate" else LOGLIK_BATCH_TOKENS
        if not self.sized_from_memory:
            return cpu_budget
        from lingdiag.models.hf import memory
        loaded = model()
        head = loaded.get_output_embeddings()
        device = execution_device(head)  # an offloaded head computes where accelerate's hook brings it
        if device.type != "cuda":
            return cpu_budget
        return self.sized(kind, memory.free_bytes(device), loaded.config, head.weight.element_size(),
                          head.weight.shape[0])

    def sized(self, kind: BatchKind, free: int, config: Any, element_size: int, vocab: int) -> int:
        """The padded-token budget of a ``kind`` batch on a card with ``free`` bytes, for a model of
        ``config`` in ``element_size``-byte weights whose head has ``vocab`` rows (``tokens`` on CUDA;
        ``bench/gpu.py --plan-only`` for a card that is not here). The tree keeps room for a head chunk's logits.
        """
        from lingdiag.models.hf import memory

        cost = memory.token_cost(config, element_size)
        reserve = 3 * self.head_chunk * vocab * 4 if kind == "loglik" else 0
        return memory.budget_tokens(free, cost, kind, reserve)

    @property
    def cpu_levers(self) -> bool:
        """Whether the CPU-only levers apply: the triton block, threads, grouped-query SDPA."""
        return self.kind == "cpu"

    @property
    def identity(self) -> dict[str, str]:
        """What the backend identity (so meta.json and cache keys) gains: only what is not the CPU's default."""
        out: dict[str, str] = {"dtype": self.dtype} if self.dtype != "float32" else {}
        if self.kind != "cpu":
            out["device"] = self.kind
        if self.device_map == "auto":
            out["device_map"] = "auto"
        return out

    def name(self, base: str) -> str:
        """The model's display name: ``base``, then the dtype and device where not float32 and the CPU."""
        return "-".join([base, *(v for k, v in self.identity.items() if k != "device_map")])

    def before_torch(self) -> None:
        """What must precede ``import torch`` on the CPU: keep triton out (see ``keep_gpu_compiler_out``)."""
        if self.cpu_levers:
            keep_gpu_compiler_out()

    def describe_threads(self) -> str:
        """The threads chosen and how to change them, in words (a shared machine slows torch down
        many times when its threads outnumber the CPUs that are free).
        """
        if not self.cpu_levers:
            return f"on {self.kind}"
        line = f"{self.threads} torch thread(s); change with --model-option threads=N"
        busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        if self.threads > 1 and busy >= self.threads:
            line += f" (the machine's load is {busy:.1f}: threads=1 is often several times faster)"
        return line

    def before_load(self) -> None:
        """The process-wide CPU levers, set before the weights load (nothing on CUDA)."""
        if not self.cpu_levers:
            return
        import torch

        torch.set_num_threads(self.threads)
        # Grouped-query attention under a padding mask: transformers copies each key/value
        # head once per query head it serves (``repeat_kv``, every layer, every step) unless
        # told that SDPA reads grouped heads itself, which torch's CPU kernel does: the same
        # log-likelihoods bit for bit (800 ExpliCa requests), decoding steps within float32
        # rounding, 1.1-1.25× the attention's speed (``make bench``, levers). A value the
        # user set is kept. On CUDA it would send masked SDPA to the math kernel.
        os.environ.setdefault("TRANSFORMERS_SDPA_FORCE_GQA", "1")

    def load_kwargs(self) -> dict[str, Any]:
        """``from_pretrained``'s placement arguments: none on the CPU, ``device_map`` (and ``max_memory``) on CUDA."""
        if self.device_map is None:
            return {}
        # accelerate takes an int of bytes or a size with a unit ("70GiB"), and refuses a bare number string.
        caps = {int(k) if k.isdigit() else k: int(v) if v.isdigit() else v for k, v in self.max_memory}
        return {"device_map": self.device_map} | ({"max_memory": caps} if caps else {})


def keep_gpu_compiler_out() -> None:
    """Make ``import triton`` fail in this process unless torch is already loaded.

    On the CPU triton (a GPU kernel compiler) is never used; but when it is installed
    (xgrammar depends on it) torch imports it eagerly, which costs ~70 MB of resident memory
    for nothing. Never on CUDA, where xgrammar's bitmask kernel and inductor need it.
    """
    if "torch" not in sys.modules:
        sys.modules.setdefault("triton", None)  # type: ignore[arg-type]


def resolve(*, device: str = "cpu", dtype: DtypeOption = "auto", threads: int | None = None,
            batch_tokens: int | None = None, max_batch: int = 256, packed_linears: bool = True,
            max_memory: dict[str, str] | None = None, machine: Machine | None = None) -> Placement:
    """The placement of a model from the backend's options.

    Args:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (see ``DEVICE_PATTERN``).
        dtype: A ``Dtype`` or ``auto`` (float32 on the CPU, bfloat16 on CUDA).
        threads: Torch CPU threads (default: the CPUs this process may run on).
        batch_tokens: Padded-token budget per batch for both request kinds (default per kind).
        max_batch: Upper bound on rows per forward batch.
        packed_linears: Whether oneDNN packing may apply (it does on the CPU only).
        max_memory: With ``device=auto``, memory caps per device (``{"0": "70GiB", "cpu": "200GiB"}``).
        machine: The machine (default: ``Machine.here``; CUDA is probed only if ``device`` asks for it).

    Returns:
        The placement.

    Raises:
        ConfigError: CUDA asked for and absent, a GPU index out of range, ``bfloat16-mixed`` on CUDA,
            or ``max_memory`` without ``device=auto``.
    """
    if max_memory and device != "auto":
        raise ConfigError(f"max_memory spreads a model over devices: it needs device=auto, not device={device}")
    machine = machine or Machine.here(probe_cuda=device != "cpu")
    kind: Kind = "cpu"
    device_map: str | None = None
    if device == "auto":
        if machine.cuda_devices:
            kind, device_map = "cuda", "auto"
    elif device != "cpu":
        index = int(device.partition(":")[2] or 0)
        if not machine.cuda_devices:
            raise ConfigError(f"device={device}: no CUDA device here (torch {machine.torch_version or '?'} "
                              "sees none); use device=cpu")
        if index >= machine.cuda_devices:
            raise ConfigError(f"device={device}: only {machine.cuda_devices} CUDA device(s) visible "
                              f"(cuda:0..cuda:{machine.cuda_devices - 1})")
        kind, device_map = "cuda", f"cuda:{index}"
    if dtype == "auto":
        dtype = "float32" if kind == "cpu" else "bfloat16" if machine.cuda_bf16 else "float16"
    if dtype == "bfloat16-mixed" and kind != "cpu":
        raise ConfigError("dtype=bfloat16-mixed is a CPU mode (oneDNN): on CUDA use dtype=bfloat16 or auto")
    cpu = kind == "cpu"
    return Placement(kind=kind, device_map=device_map, dtype=dtype, threads=threads or machine.cpus,
                     packed_linears=packed_linears and cpu, batch_tokens=batch_tokens, max_batch=max_batch,
                     head_chunk=HEAD_CHUNK if cpu else GPU_HEAD_CHUNK, call_tokens=CALL_TOKENS if cpu else None,
                     packed_attention="dense" if cpu else "blocks",
                     max_memory=tuple(sorted((max_memory or {}).items())) if device_map == "auto" else ())

def offloaded(module: Any) -> bool:
    """Whether accelerate offloaded ``module``: its weight waits on ``meta`` and only a call of the module
    (its hook) brings it in, so code that reads the weight itself must call the module instead.
    """
    return bool(module.weight.device.type == "meta")


def execution_device(module: Any) -> torch.device:
    """Where ``module`` computes: its weight's device, or for a module accelerate offloaded
    (``device_map="auto"`` past the cards' memory) the device its hook brings the weight to.
    """
    import torch

    if offloaded(module):
        # accelerate chains hooks in a SequentialHook; the AlignDevicesHook among them names the device.
        hooks = getattr(module._hf_hook, "hooks", (module._hf_hook,))
        return torch.device(next(d for h in hooks if (d := getattr(h, "execution_device", None)) is not None))
    device: torch.device = module.weight.device
    return device

