"""Hugging Face transformers backend: hub ids, local directories and GGUF files, on the CPU or CUDA.

Where it runs (device, dtype, threads, budgets, CPU levers) is one ``Placement``, resolved
once from the options. Greedy unless a request asks for a sample (``GenerationRequest.sampling``:
drawn at its temperature within the ``top_k`` and ``top_p`` options, seeded per request; ``decode``).
Batched: batches are formed by a token budget over
length-sorted requests (short requests travel in large batches, long ones in small), and
answers are returned in request order.

Shared prefixes are computed once (``prefix_reuse``, on by default; see
``lingdiag.models.hf.batching``): generation requests of one call run their common prompt
prefix once and every row reads that one copy of its keys and values (``decode``);
log-likelihood requests run as a three-level tree and apply the LM head only at the
positions that are scored (``score``). The plain path (``prefix_reuse=False``) runs every
request in full; both give the same greedy text and argmax, and log-probs equal within 1e-4.

The pieces: ``load`` (the lazily loaded model and tokenizer), ``forward`` (the
shared-prefix forward pass), ``decode`` (generation), ``score`` (log-likelihood),
``batching`` (planning), ``kv`` (caches) and ``constraints`` (constrained decoding).
torch and transformers are imported, and the weights loaded, on the first request: a run
answered entirely from the response cache never pays for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from importlib.util import find_spec
from typing import Any

from lingdiag.config import answer_options
from lingdiag.errors import MissingDependency
from lingdiag.models.base import Capabilities, Precision
from lingdiag.models.hf import calibrate
from lingdiag.models.hf.adapters import Adapter, parse_adapter
from lingdiag.models.hf.batching import Budget
from lingdiag.models.hf.calibrate import Calibration
from lingdiag.models.hf.checkpoint import Checkpoint
from lingdiag.models.hf.decode import Decoder
from lingdiag.models.hf.forward import Forward
from lingdiag.models.hf.load import LoadedModel, stored_param_count
from lingdiag.models.hf.options import HFOptions
from lingdiag.models.hf.placement import NOISE_PER_TOKEN, Placement
from lingdiag.models.hf.score import Scorer
from lingdiag.records import Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest
from lingdiag.thinking import Thinking


class HFBackend:
    """A causal LM from transformers, run where its ``Placement`` says (the CPU in float32 by default)."""

    def __init__(self, checkpoint: Checkpoint | str, options: HFOptions | None = None,
                 placement: Placement | None = None) -> None:
        """Describe the model at ``checkpoint`` (a hub id or a directory); nothing is loaded until the
        first request.

        Args:
            checkpoint: The weights: their path, display name, hash and hub revision (a bare
                path for a directory named by itself).
            options: Every option of the backend, whole (``HFOptions``; default: all defaults).
            placement: Where it runs, if not ``options.placement()`` (the float32 twin; benchmarks).
        """
        missing = [p for p in ("torch", "transformers") if find_spec(p) is None]
        if missing:
            raise MissingDependency("the transformers backend", "hf", ["torch==2.13.0", "transformers"])
        self.checkpoint = checkpoint = Checkpoint(checkpoint) if isinstance(checkpoint, str) else checkpoint
        self.options = options = options or HFOptions()
        self.placement = placement = placement or options.placement()
        adapter = parse_adapter(options.adapter) if options.adapter else None
        self.name = placement.name(checkpoint.display_name) + (adapter.suffix if adapter else "")
        # The revision only when one is named, so the ``from_pretrained`` calls of every other model stay as they were.
        revision: dict[str, Any] = {"revision": checkpoint.revision.commit} if checkpoint.revision else {}
        self._lm = LoadedModel(checkpoint.path, placement, system_turn=options.system_turn, adapter=adapter,
                               trust_remote_code=options.trust_remote_code, **revision)
        self._identity = _identity(self.name, checkpoint, options, placement, adapter)
        # Not in the identity: the answers the cache keeps are the reduced dtype's either way (re-scored
        # ones bypass it); meta.json names the option under ``precision``, the table line counts its work.
        self._rescore = options.rescore_fragile if placement.dtype != "float32" else None
        # Packed passes only where asked for: on the CPU float32 sums in another order (equal within 1e-5,
        # not to the last bit), and on an H200 a pass packed to the card's memory spent 63% of its kernel
        # time in attention under the dense mask (``HFOptions.packing``).
        self.packing = options.packing
        self._float32: HFBackend | None = None
        self._calibration: Calibration | None = None
        self._usage: Counter[str] = Counter()
        forward = Forward(self._lm, self._usage)
        self._decoder = Decoder(forward, options.top_p, options.top_k)
        self._scorer = Scorer(forward)

    @classmethod
    def from_model(cls, model: Any, tokenizer_path: str, placement: Placement, *, name: str,
                   options: HFOptions | None = None) -> HFBackend:
        """A backend on a model built in memory (a random-initialised 8B for ``bench/gpu.py``,
        which no checkpoint on disk holds), with the tokenizer at ``tokenizer_path``.

        Args:
            model: A transformers causal LM, on ``placement``'s device in its dtype.
            tokenizer_path: A model directory whose tokenizer the model uses.
            placement: Where ``model`` is.
            name: Its name (the identity names no weights: there are none on disk).
            options: The backend's options (``prefix_reuse``, ``continuous_batching``, ...).
        """
        # No calibration: its float32 twin would load ``tokenizer_path``'s weights, not ``model``'s.
        uncalibrated = (options or HFOptions()).model_copy(update={"calibrate": False})
        backend = cls(Checkpoint(tokenizer_path, name=name), uncalibrated, placement)
        backend._lm.adopt(model)
        return backend

    @property
    def identity(self) -> dict[str, str]:
        """Backend, model name, path and weights hash."""
        return dict(self._identity)

    def usage(self) -> dict[str, int]:
        """Work done since the backend was built, for ``meta.json`` and the benchmark.

        Returns:
            ``forward_tokens``: real tokens run through the transformer body (a shared prefix
            counts once; generated tokens count once each); ``padded_tokens``: the same plus
            padding; ``head_positions``: positions the LM head computed logits for;
            ``refilled_rows``: requests that joined a running generation batch; and, when
            the chat template refused a system turn, ``rendered_plain_fallback`` or
            ``rendered_folded``: generation requests rendered that way; on CUDA, ``peak_gpu_mb``: the most
            memory torch allocated at once on the GPUs since the process started (summed over devices).
        """
        work = {k: self._usage[k] for k in ("forward_tokens", "padded_tokens", "head_positions", "refilled_rows")}
        work |= {k: v for k, v in self._usage.items()
                 if k.startswith(("rendered_", "plan_")) or k in ("rescored_requests", "planned_flops", "useful_flops")}
        if self.placement.kind == "cuda" and self._lm.is_loaded:
            import torch

            work["peak_gpu_mb"] = sum(torch.cuda.max_memory_allocated(d)
                                      for d in range(torch.cuda.device_count())) >> 20
        return work

    @property
    def capabilities(self) -> Capabilities:
        """See :func:`capabilities`."""
        return capabilities()

    @property
    def loaded(self) -> LoadedModel:
        """The model and tokenizer (each loaded on first use)."""
        return self._lm

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer, loaded on first use (a pad token is always set)."""
        return self._lm.tokenizer

    @property
    def model(self) -> Any:
        """The transformers model (placed as ``placement`` says), eval mode, loaded on first use."""
        return self._lm.model

    @property
    def eos_ids(self) -> set[int]:
        """Token ids that end a generation (the model's and the tokenizer's EOS)."""
        return self._lm.eos_ids

    @property
    def prefix_id(self) -> int:
        """The token an empty log-likelihood context stands for: BOS, else EOS (as lm-eval)."""
        return self._lm.prefix_id

    def render(self, request: GenerationRequest) -> str:
        """The exact prompt text for ``request`` (chat template applied)."""
        return self._lm.render(request)

    def check_thinking(self, thinking: Thinking) -> None:
        """Refuse a thinking setting the chat template has no switch for (reads the tokenizer only)."""
        self._lm.thinking_switch(thinking)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy or sampled generation, batched by a token budget; see ``Backend.generate``."""
        placement = self.placement
        tokens = placement.tokens("generate", lambda: self._lm.model)
        return self._decoder.generate(requests, Budget(tokens, placement.max_batch, self.options.prefix_reuse,
                                                       self.options.continuous_batching,
                                                       static=self.options.kv_cache == "static"))

    def precision(self) -> Precision | None:
        """The dtype's noise bound (measured by ``calibrate``, stored and reused; else ``NOISE_PER_TOKEN``)
        and, with ``rescore_fragile``, float32 re-scoring; None in float32.
        """
        if self.placement.dtype == "float32":
            return None
        bound = NOISE_PER_TOKEN[self.placement.dtype]
        if self.options.calibrate:
            if self._calibration is None:
                self._calibration = calibrate.stored(self._identity, self.loglikelihood,
                                                     lambda rs: self._twin().loglikelihood(rs))
            bound = self._calibration.per_token
        return Precision(self.placement.dtype, bound, self._rescored if self._rescore else None)

    def _twin(self) -> HFBackend:
        """The same weights in float32 on the same device (loaded on first use)."""
        if self._float32 is None:
            self._float32 = HFBackend(self.checkpoint, self.options, replace(self.placement, dtype="float32"))
        return self._float32

    def _rescored(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """``requests`` scored by the same weights in float32 on the same device."""
        answers = self._twin().loglikelihood(requests)
        self._usage["rescored_requests"] += len(requests)
        return answers

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Summed continuation log-probs, batched by a token budget; see ``Backend.loglikelihood``."""
        placement = self.placement
        tokens = placement.tokens("loglik", lambda: self._lm.model)
        return self._scorer.loglikelihood(requests, Budget(tokens, placement.max_batch, self.options.prefix_reuse,
                                                           call_tokens=placement.call_tokens,
                                                           packed=tokens if self.packing else None,
                                                           choose_padded=self.packing == "auto"))


def capabilities() -> Capabilities:
    """What the transformers backend serves, whatever the model: generation (greedy or sampled at a
    temperature, top-p and top-k), log-likelihoods and thinking settings; constrained decoding where
    xgrammar is installed. Declared without loading anything (``Loader.capabilities``).
    """
    from lingdiag.models.hf import constraints

    return Capabilities(generate=True, loglikelihood=True, constrained=constraints.available(), sampling=True,
                        thinking=True)


_NAMED_OTHERWISE = frozenset({"device", "dtype", "max_memory", "adapter", "packing", "top_p"})
"""Options the identity names by what they resolve to, as it always has: the placement's dtype and device (each
only where not float32 and the CPU: ``dtype=auto`` on the CPU is float32's answers), the memory caps only where
the model is spread over devices (elsewhere they place nothing), the adapter by its files' SHA-256, packing as
``on`` or ``auto``, top_p as ``:g`` writes it."""


def _identity(name: str, checkpoint: Checkpoint, options: HFOptions, placement: Placement,
              adapter: Adapter | None) -> dict[str, str]:
    """The backend identity (``meta.json``'s model part and the cache key's): backend, model, path and weights,
    then every option that may change answers (not marked ``TRANSPORT_MARK``, not ``HFOptions.KEEP_ANSWERS``)
    only where it is not the default (``answer_options``), so identities written before an option existed stay
    as they were and an option added later is named without being listed here.
    """
    identity = {"backend": "hf", "model": name, "path": checkpoint.path, "weights_sha256": checkpoint.weights_hash}
    if checkpoint.revision is not None:
        identity["revision"] = checkpoint.revision.commit
    identity |= {k: v for k, v in answer_options(options).items()
                 if k not in _NAMED_OTHERWISE and k not in HFOptions.KEEP_ANSWERS}
    if options.top_p != 1:  # how samples are drawn: only where set, so identities written before stay as they were
        identity["top_p"] = f"{options.top_p:g}"
    if options.packing:
        identity["packing"] = "auto" if options.packing == "auto" else "on"
    identity |= placement.identity  # dtype and device, each only where not float32 and the CPU
    if placement.device_map == "auto" and options.max_memory:
        identity["max_memory"] = answer_options(options)["max_memory"]
    if adapter is not None:
        identity |= adapter.identity.recorded()
    n_params = stored_param_count(checkpoint.path)
    if n_params:
        identity["n_params"] = str(n_params)
    return identity
