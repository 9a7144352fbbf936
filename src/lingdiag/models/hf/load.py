"""Loading a transformers model lazily, and what the backend reads from it.

``LoadedModel`` describes a model without importing anything heavy: torch and
transformers are imported, and the weights loaded, on the first use of ``tokenizer`` or
``model``, so a run answered entirely from the response cache never pays for them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from lingdiag.errors import BackendError, ConfigError
from lingdiag.records import ChatMessage, GenerationRequest


def keep_gpu_compiler_out() -> None:
    """Make ``import triton`` fail in this process unless torch is already loaded.

    This backend runs on CPU, where triton (a GPU kernel compiler) is never used; but when
    it is installed (xgrammar depends on it) torch imports it eagerly, which costs ~70 MB of
    resident memory for nothing. xgrammar imports it only for CUDA logits.
    """
    if "torch" not in sys.modules:
        sys.modules.setdefault("triton", None)  # type: ignore[arg-type]


Dtype = Literal["float32", "bfloat16", "bfloat16-mixed", "float16"]
"""Weights and activations dtype. ``bfloat16-mixed`` loads float32 and computes only the
transformer body's matrix products in bfloat16 (``lingdiag.models.hf.linear``). float32 is the
default: on a CPU without native bf16/f16 dot products (AVX2 only) the half types run several
times slower, with them (AVX512-BF16, AMX) about twice as fast, and on any CPU they move
log-probs and, sometimes, decisions; ``make bench`` measures both on the machine at hand."""

Rendering = Literal["plain-fallback", "folded"]
"""How a chat request was rendered when the model's template refused its system turn."""


def fold_system(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """``messages`` with the system turns folded into the first user turn (``system + blank line + user``)."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    rest = [m for m in messages if m.role != "system"]
    if len(rest) == len(messages):
        return tuple(messages)
    first = next((k for k, m in enumerate(rest) if m.role == "user"), None)
    if first is None:
        return (ChatMessage("user", system), *rest)
    rest[first] = ChatMessage("user", system + "\n\n" + rest[first].content)
    return tuple(rest)


def fallback_chat(messages: Sequence[ChatMessage]) -> str:
    """The prompt used for models without a chat template (e.g. base models).

    Each turn becomes ``Role: content`` separated by blank lines, ending with
    ``Assistant:`` so that a base model continues as the answerer.
    """
    turns = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join(turns) + "\n\nAssistant:"


def stored_param_count(model_path: str) -> int | None:
    """Parameters stored in ``model_path``'s safetensors files, from their headers alone.

    Recorded as ``n_params`` for model-scale analyses without loading the weights (the
    backend loads lazily); None for hub ids, GGUF or ``.bin`` checkpoints.
    """
    import json
    import math
    from pathlib import Path

    files = sorted(Path(model_path).glob("*.safetensors")) if Path(model_path).is_dir() else []
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            header = json.loads(fh.read(int.from_bytes(fh.read(8), "little")))
        total += sum(math.prod(v["shape"]) for k, v in header.items() if k != "__metadata__")
    return total or None


def _local(path: str) -> bool:
    """Whether ``path`` names a directory rather than a hub id (``name`` or ``namespace/name``)."""
    return path.startswith(("/", ".", "~")) or path.count("/") > 1 or Path(path).exists()


class LoadedModel:
    """A causal LM and its tokenizer, loaded on first use, on the CPU (float32 unless asked)."""

    def __init__(self, path: str, *, threads: int | None = None, system_turn: Literal["plain", "fold"] = "plain",
                 dtype: Dtype = "float32", packed_linears: bool = True, **load_kwargs: Any) -> None:
        """Describe the model at ``path``; nothing is imported or loaded yet.

        Args:
            path: Hub id or local directory.
            threads: Torch CPU threads (default: all cores), set when the model loads.
            system_turn: What to do when the chat template refuses a system turn (see ``rendered``).
            dtype: The dtype the weights are loaded in (see ``Dtype``).
            packed_linears: Run the transformer body's linear layers on oneDNN with weights
                packed at load (``lingdiag.models.hf.linear``; float16 never is).
            **load_kwargs: Passed to both ``from_pretrained`` calls (``trust_remote_code``).
        """
        if _local(path) and not Path(path).expanduser().is_dir():
            # Checked here: transformers would call it a malformed hub repo id.
            raise ConfigError(f"no such model directory: {path}")
        self.path = path
        self.system_turn = system_turn
        self.dtype = dtype
        self.packed_linears = packed_linears
        self._threads = threads
        self.load_kwargs = load_kwargs
        self._tokenizer: Any = None
        self._model: Any = None

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer, loaded on first use (a pad token is always set)."""
        if self._tokenizer is None:
            keep_gpu_compiler_out()
            from transformers import AutoTokenizer

            try:
                tokenizer = AutoTokenizer.from_pretrained(self.path, **self.load_kwargs)
            except OSError as e:
                raise BackendError(f"cannot load the tokenizer of {self.path!r}: {e}") from e
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def model(self) -> Any:
        """The transformers model in ``dtype``, eval mode, loaded on first use."""
        if self._model is None:
            keep_gpu_compiler_out()
            import torch
            from transformers import AutoModelForCausalLM

            torch.set_num_threads(self._threads or os.cpu_count() or 1)
            # Grouped-query attention under a padding mask: transformers copies each key/value
            # head once per query head it serves (``repeat_kv``, every layer, every step) unless
            # told that SDPA reads grouped heads itself, which torch's CPU kernel does: the same
            # log-likelihoods bit for bit (800 ExpliCa requests), decoding steps within float32
            # rounding, 1.1-1.25× the attention's speed (``make bench``, levers). A value the
            # user set is kept.
            os.environ.setdefault("TRANSFORMERS_SDPA_FORCE_GQA", "1")
            try:
                weights = torch.float32 if self.dtype == "bfloat16-mixed" else getattr(torch, self.dtype)
                model: Any = AutoModelForCausalLM.from_pretrained(self.path, dtype=weights, **self.load_kwargs)
            except OSError as e:
                raise BackendError(f"cannot load model {self.path!r}: {e}") from e
            model.eval()
            if self.packed_linears and self.dtype != "float16":
                from lingdiag.models.hf.linear import pack_linears

                compute = torch.float32 if self.dtype == "float32" else torch.bfloat16
                probe = self.tokenizer("The cat sat on the mat because it was tired.", add_special_tokens=False)
                if not pack_linears(model, compute, list(probe["input_ids"])) and self.dtype == "bfloat16-mixed":
                    raise BackendError(f"--dtype bfloat16-mixed needs oneDNN linear layers, which {self.path!r} "
                                       "or this torch build cannot use: choose float32 or bfloat16")
            elif self.dtype == "bfloat16-mixed":
                raise BackendError("--dtype bfloat16-mixed needs packed_linears=true")
            self._model = model
        return self._model

    @property
    def eos_ids(self) -> set[int]:
        """Token ids that end a generation (the model's and the tokenizer's EOS)."""
        eos = self.model.generation_config.eos_token_id
        ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        ids.add(self.tokenizer.eos_token_id)
        return ids

    @property
    def prefix_id(self) -> int:
        """The token an empty log-likelihood context stands for: BOS, else EOS (as lm-eval)."""
        bos = self.tokenizer.bos_token_id
        return int(bos if bos is not None else self.tokenizer.eos_token_id)

    @cached_property
    def window(self) -> int | None:
        """The sliding-window size of the model's attention, if any.

        Sliding-window layers count cache slots, and prefix reuse adds padding slots
        between segments; batches that could reach the window take the plain path.
        """
        window = self.model.config.get_text_config().to_dict().get("sliding_window")
        return int(window) if window else None

    @cached_property
    def softcap(self) -> float | None:
        """The cap on the final logits (Gemma-family configs; None for other architectures)."""
        cap = self.model.config.get_text_config().to_dict().get("final_logit_softcapping")
        return float(cap) if cap else None

    def render(self, request: GenerationRequest) -> str:
        """The exact prompt text for ``request`` (chat template applied)."""
        return self.rendered(request)[0]

    def rendered(self, request: GenerationRequest) -> tuple[str, Rendering | None]:
        """The exact prompt text for ``request``, and how it was rendered when not as asked.

        A chat template that refuses the system turn (Gemma-2 raises "System role not
        supported") does not stop the run: as the ImperfectiveNLI authors' code did, the turns
        become plain text, ``system + blank line + user`` without chat markup (``plain-fallback``);
        with ``system_turn="fold"`` the system turn is folded into the first user turn inside
        the template instead (``folded``). Templates that accept the turns are unaffected.
        """
        if not request.messages:
            return request.prompt or "", None
        if not self.tokenizer.chat_template:
            return fallback_chat(request.messages), None
        from jinja2.exceptions import TemplateError

        try:
            return self._apply_template(request.messages), None
        except TemplateError:
            if not any(m.role == "system" for m in request.messages):
                raise
        if self.system_turn == "fold":
            return self._apply_template(fold_system(request.messages)), "folded"
        # With few-shot turns, every turn's content in order, each after a blank line.
        return "\n\n".join(m.content for m in request.messages), "plain-fallback"

    def _apply_template(self, messages: Sequence[ChatMessage]) -> str:
        msgs = [{"role": m.role, "content": m.content} for m in messages]
        return str(self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False))

    def encode_prompt(self, request: GenerationRequest) -> list[int]:
        """The prompt tokens of ``request``."""
        return self.encode(request)[0]

    def encode(self, request: GenerationRequest) -> tuple[list[int], Rendering | None]:
        """The prompt tokens of ``request``, and its rendering (see ``rendered``)."""
        text, rendering = self.rendered(request)
        # A chat template writes its own BOS; raw and plain-text prompts get the tokenizer's specials.
        templated = bool(request.messages and self.tokenizer.chat_template) and rendering != "plain-fallback"
        return list(self.tokenizer(text, add_special_tokens=not templated)["input_ids"]), rendering
