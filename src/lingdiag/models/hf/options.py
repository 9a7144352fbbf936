"""``HFOptions``: every option of the transformers backend, declared once.

Built once from the command line (``--batch-tokens``, ``--trust-remote-code``, ``--dtype`` and
``--model-option``, through ``RunConfig.provider_options``) and passed whole to ``HFBackend`` and
to its float32 twin: an option added here reaches the backend without being named again.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.config import TRANSPORT_MARK
from lingdiag.models.hf.placement import DEVICE_PATTERN, DtypeOption, Placement, resolve


class HFOptions(BaseModel):
    """Options of the transformers backend. Fields marked ``TRANSPORT_MARK`` (batch sizes, CPU threads) group
    the same requests otherwise and may change between attempts of a run; every other one is the run's, and is
    named in the backend identity (so ``meta.json`` and the response cache's keys) where not at its default
    (``lingdiag.config.answer_options``), but for :attr:`KEEP_ANSWERS`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    KEEP_ANSWERS: ClassVar[frozenset[str]] = frozenset({"rescore_fragile", "calibrate"})
    """Options that change what a run does with the answers the cache keeps, never those answers: re-scored
    decisions bypass the cache, and a calibration measures the dtype's noise bound (``meta.json``'s
    ``precision`` names both). Not in the identity, so a run re-scored or calibrated reuses the cached answers."""

    batch_tokens: int | None = Field(default=None, ge=1, json_schema_extra=TRANSPORT_MARK)
    """Padded-token budget per batch, for both request kinds (``--batch-tokens``)."""
    trust_remote_code: bool = False
    """Allow the model repository's own code (``--trust-remote-code``)."""
    max_batch: int = Field(default=256, ge=1, json_schema_extra=TRANSPORT_MARK)
    """Upper bound on rows per forward batch."""
    threads: int | None = Field(default=None, ge=1, json_schema_extra=TRANSPORT_MARK)
    """Torch CPU threads (default: the CPUs this process may run on, e.g. a SLURM allocation's)."""
    device: str = Field(default="cpu", pattern=DEVICE_PATTERN)
    """``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (every visible GPU, ``device_map="auto"``; the CPU
    when there is none). Anything but the CPU is named in the model's name (``smollm2-135m-bfloat16-cuda``),
    the backend identity (so meta.json and cache keys) and every table: CUDA kernels give other
    log-probs than the CPU's."""
    max_memory: dict[str, str] | None = None
    """With ``device=auto``: memory caps per device, e.g. ``{"0": "70GiB", "1": "70GiB", "cpu": "200GiB"}``;
    layers that do not fit the GPUs are offloaded to the CPU (slow, but a model larger than the cards runs)."""
    prefix_reuse: bool = True
    """Compute shared prompt prefixes once."""
    system_turn: Literal["plain", "fold"] = "plain"
    """When the chat template refuses a system turn (Gemma-2): ``plain`` text ``system + blank line + user``
    without chat markup, as the ImperfectiveNLI authors' code did, or ``fold`` it into the first user
    turn of the template. Recorded per answer (``rendering``) and in the backend identity."""
    continuous_batching: bool = True
    """Refill the rows of finished answers with waiting requests (generation)."""
    kv_cache: Literal["dynamic", "static"] = "dynamic"
    """How generation keeps keys and values: ``dynamic``, grown by ``torch.cat`` at every step and
    compacted as answers end; ``static``, fixed rows × slots allocated once per batch and written in
    place (``lingdiag.models.hf.kv.SlotCache``), shapes fixed while a batch decodes (halved at most
    log2(rows) times). The same tokens; log-probs equal within float rounding (attention sums over
    more, masked, slots), so named in the backend identity when static. Not for sliding-window models, nor
    for a prompt plus ``max_new_tokens`` past the model's context (each row's slots are allocated up front:
    refused in one line, where the dynamic cache grows only as far as the answers go)."""
    packed_linears: bool = True
    """Run the transformer body's linear layers on oneDNN with weights packed at load (float32
    results equal within float32 rounding; ``lingdiag.models.hf.linear``)."""
    dtype: DtypeOption = "auto"
    """Weights dtype (``--dtype``; ``auto``: float32 on the CPU, bfloat16 on CUDA; ``bfloat16-mixed``:
    bf16 matrix products in a float32 model, CPU only). Anything but float32 changes log-probs and
    can change decisions: it is named in the model's name (``smollm2-135m-bfloat16``), the backend
    identity (so meta.json and cache keys) and every table. ``make bench`` measures its price."""

    top_p: float = Field(default=1.0, gt=0, le=1)
    """Sampled generation (the temperature axis) draws among the fewest likeliest tokens whose probabilities
    reach ``top_p`` (1: every token). Named in the backend identity (so meta.json and cache keys) when not 1."""
    top_k: int = Field(default=0, ge=0)
    """Sampled generation draws among the ``top_k`` likeliest tokens (0: every token), before ``top_p``.
    Named in the backend identity when set."""

    adapter: str | None = None
    """A steering vector or LoRA adapter applied to the model: ``steer:FILE@ALPHA`` or ``lora:DIR``
    (``--model BASE+steer:…`` says the same; ``lingdiag.models.hf.adapters``). Named in the
    model's name and identity, with its files' SHA-256."""

    rescore_fragile: Literal["float32"] | None = None
    """In bfloat16/float16: score the requests of fragile decisions (margin within the dtype's
    measured noise, ``lingdiag.metrics.fragile``) again in float32 on the same device, so those
    decisions are float32's; the records say which (``decision.rescored``), meta.json names it
    (``precision``). Nothing to do in float32."""

    packing: bool | Literal["auto"] = False
    """Score log-likelihoods in packed passes: each level of the prefix tree one row of documents end to
    end under a document mask, with no padding (``lingdiag.models.hf.score.Scorer.packed``), block-sparse
    on CUDA (``Placement.packed_attention``). The tokens per pass are chosen by the work model
    (``lingdiag.models.hf.workplan.choose``: least FLOPs plus a fixed cost per pass), up to the batch
    budget; ``auto`` lets it choose the padded passes instead where they do less work. Equal to the padded
    passes within 1e-5 relative in float32 but not to the last bit, so named in the backend identity
    (``on``, ``auto``), and each call's choice counted in ``usage`` (``plan_*``, ``planned_flops``,
    ``useful_flops``). Off by default on every device until a card measures it faster: packed to the
    card's memory under a dense mask (427,046 tokens for an 8B model on an H200), attention took 63% of
    the kernel time and BLiMP-sized pairs ran at 0.35× lm-eval's speed (``bench/README.md``, "Measured on
    an H200"); the block-sparse, capped passes have not met a card yet."""

    calibrate: bool = False
    """In bfloat16/float16: measure the per-token noise bound behind ``fragile`` for this model, dtype and
    device on a fixed sample against the same weights in float32 (``lingdiag.models.hf.calibrate``; stored
    in the cache and reused; meta.json ``precision.per_token_noise``); off: the fixed ``NOISE_PER_TOKEN``.
    Off by default: on an H200 the calibrated bound of an 8B-shaped model in bf16 (0.069 nat per token)
    left one of 9 flipped decisions in 400 unmarked, so ``rescore_fragile`` would have kept a bf16 decision
    that float32 reverses; the fixed 0.1 marked all 9 (``bench/README.md``, "Measured on an H200")."""

    def placement(self) -> Placement:
        """Where the model runs, resolved from these options and the machine."""
        return resolve(device=self.device, dtype=self.dtype, threads=self.threads, batch_tokens=self.batch_tokens,
                       max_batch=self.max_batch, packed_linears=self.packed_linears, max_memory=self.max_memory)
