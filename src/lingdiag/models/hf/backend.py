"""Hugging Face transformers backend: hub ids, local directories and GGUF files, on the CPU or CUDA.

Where it runs (device, dtype, threads, budgets, CPU levers) is one ``Placement``, resolved
once from the options. Greedy, batched: batches are formed by a token budget over
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
from typing import Any, Literal

from lingdiag.errors import MissingDependency
from lingdiag.models.base import Capabilities, Precision
from lingdiag.models.hf.adapters import Adapter
from lingdiag.models.hf.batching import Budget
from lingdiag.models.hf.decode import Decoder
from lingdiag.models.hf.forward import Forward
from lingdiag.models.hf.load import LoadedModel, stored_param_count
from lingdiag.models.hf.placement import NOISE_PER_TOKEN, Placement, resolve
from lingdiag.models.hf.score import Scorer
from lingdiag.records import Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest
from lingdiag.thinking import Thinking


class HFBackend:
    """A causal LM from transformers, run where its ``Placement`` says (the CPU in float32 by default)."""

    def __init__(
        self,
        model_path: str,
        placement: Placement | None = None,
        *,
        name: str | None = None,
        weights_hash: str = "",
        trust_remote_code: bool = False,
        prefix_reuse: bool = True,
        system_turn: Literal["plain", "fold"] = "plain",
        continuous_batching: bool = True,
        adapter: Adapter | None = None,
        rescore_fragile: Literal["float32"] | None = None,
    ) -> None:
        """Describe ``model_path`` (a hub id or a directory).

        Nothing is loaded until the first request.

        Args:
            model_path: Hub id or local directory.
            placement: Device, dtype, threads, batch budgets and CPU levers, resolved once
                (default: ``lingdiag.models.hf.placement.resolve()``, the CPU in float32 with every CPU lever).
            name: Display name (defaults to ``model_path``).
            weights_hash: SHA-256 of the weights file, recorded in ``meta.json`` and cache keys.
            trust_remote_code: Allow the model repository's own code; off unless asked.
            prefix_reuse: Compute shared prompt prefixes once (see the module docstring).
            system_turn: When the chat template refuses a system turn: ``plain`` text
                ``system + blank line + user`` (as the ImperfectiveNLI authors' code), or ``fold``
                it into the first user turn; see ``LoadedModel.rendered``.
            continuous_batching: Refill the rows of finished answers with waiting requests
                (see ``decode``); off, batches are fixed and thin out as answers end.
            adapter: A steering vector or LoRA adapter applied at load (``adapters``); named
                in the model's name and identity.
            rescore_fragile: ``float32``: in a reduced dtype, fragile decisions' requests are scored
                again by the same weights in float32 on the same device (``precision``).
        """
        missing = [p for p in ("torch", "transformers") if find_spec(p) is None]
        if missing:
            raise MissingDependency("the transformers backend", "hf", ["torch==2.13.0", "transformers"])
        self.placement = placement = placement or resolve()
        self.name = placement.name(name or model_path)
        self.prefix_reuse = prefix_reuse
        self.continuous_batching = continuous_batching
        self._lm = LoadedModel(model_path, placement, system_turn=system_turn, adapter=adapter,
                               trust_remote_code=trust_remote_code)
        self._identity = {"backend": "hf", "model": self.name, "path": model_path, "weights_sha256": weights_hash}
        if system_turn != "plain":
            # Named only when not the default, so existing cache keys and meta.json stay as they were.
            self._identity["system_turn"] = system_turn
        self._identity |= placement.identity  # dtype and device, each only where not float32 and the CPU
        if adapter is not None:
            self.name += adapter.suffix
            self._identity |= {"model": self.name, **adapter.identity.recorded()}
        # Not in the identity: the answers the cache keeps are the reduced dtype's either way (re-scored
        # ones bypass it); meta.json names the option under ``precision``, the table line counts its work.
        self._rescore = rescore_fragile if placement.dtype != "float32" else None
        self._twin_args: dict[str, Any] = {"name": name, "weights_hash": weights_hash,
                                           "trust_remote_code": trust_remote_code, "prefix_reuse": prefix_reuse,
                                           "system_turn": system_turn, "adapter": adapter}
        self._float32: HFBackend | None = None
        n_params = stored_param_count(model_path)
        if n_params:
            self._identity["n_params"] = str(n_params)
        self._usage: Counter[str] = Counter()
        forward = Forward(self._lm, self._usage)
        self._decoder = Decoder(forward)
        self._scorer = Scorer(forward)

    @classmethod
    def from_model(cls, model: Any, tokenizer_path: str, placement: Placement, *, name: str,
                   **options: Any) -> HFBackend:
        """A backend on a model built in memory (a random-initialised 8B for ``bench/gpu.py``,
        which no checkpoint on disk holds), with the tokenizer at ``tokenizer_path``.

        Args:
            model: A transformers causal LM, on ``placement``'s device in its dtype.
            tokenizer_path: A model directory whose tokenizer the model uses.
            placement: Where ``model`` is.
            name: Its name (the identity names no weights: there are none on disk).
            **options: ``HFBackend`` keywords (``prefix_reuse``, ``continuous_batching``, ...).
        """
        backend = cls(tokenizer_path, placement, name=name, **options)
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
        work |= {k: v for k, v in self._usage.items() if k.startswith("rendered_") or k == "rescored_requests"}
        if self.placement.kind == "cuda" and self._lm.is_loaded:
            import torch

            work["peak_gpu_mb"] = sum(torch.cuda.max_memory_allocated(d)
                                      for d in range(torch.cuda.device_count())) >> 20
        return work

    @property
    def capabilities(self) -> Capabilities:
        """Generation and log-likelihood; constrained decoding is added by the constraint module."""
        from lingdiag.models.hf import constraints

        return Capabilities(generate=True, loglikelihood=True, constrained=constraints.available())

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
        """Greedy generation, batched by a token budget; see ``Backend.generate``."""
        placement = self.placement
        tokens = placement.tokens("generate", lambda: self._lm.model)
        return self._decoder.generate(requests, Budget(tokens, placement.max_batch, self.prefix_reuse,
                                                       self.continuous_batching))

    def precision(self) -> Precision | None:
        """The dtype's noise bound (``NOISE_PER_TOKEN``) and, with ``rescore_fragile``, float32 re-scoring;
        None in float32.
        """
        if self.placement.dtype == "float32":
            return None
        return Precision(self.placement.dtype, NOISE_PER_TOKEN[self.placement.dtype],
                         self._rescored if self._rescore else None)

    def _rescored(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """``requests`` scored by the same weights in float32 on the same device (loaded on first use)."""
        if self._float32 is None:
            self._float32 = HFBackend(self._lm.path, replace(self.placement, dtype="float32"), **self._twin_args)
        answers = self._float32.loglikelihood(requests)
        self._usage["rescored_requests"] += len(requests)
        return answers

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Summed continuation log-probs, batched by a token budget; see ``Backend.loglikelihood``."""
        placement = self.placement
        tokens = placement.tokens("loglik", lambda: self._lm.model)
        return self._scorer.loglikelihood(requests, Budget(tokens, placement.max_batch, self.prefix_reuse,
                                                           call_tokens=placement.call_tokens))
