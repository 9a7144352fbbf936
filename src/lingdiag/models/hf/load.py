"""Loading a transformers model lazily, and what the backend reads from it.

``LoadedModel`` describes a model without importing anything heavy: torch and
transformers are imported, and the weights loaded, on the first use of ``tokenizer`` or
``model``, so a run answered entirely from the response cache never pays for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lingdiag.errors import BackendError, ConfigError
from lingdiag.models.hf.adapters import Adapter
from lingdiag.models.hf.placement import Placement, execution_device
from lingdiag.models.progress import stage
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.thinking import Thinking, replay

if TYPE_CHECKING:
    import torch


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


def on_device(index: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``index`` on ``device``: under ``device_map="auto"`` each layer's cache lives on its layer's
    device, and an index must be where the tensor it selects from is (no copy on one device).
    """
    return index if index.device == device else index.to(device)


def staged(data: Sequence[Any], device: torch.device) -> torch.Tensor:
    """``torch.tensor(data)`` on ``device``, copied without the host waiting on the device.

    On CUDA a tensor built from a list is copied from pageable memory, and that copy queues behind
    the kernels already launched: on an H200 the scoring loop's ``torch.tensor`` calls spent 1.24 s
    waiting on attention kernels (bench/README.md). Staged in pinned memory, the copy is
    asynchronous (torch's pinned allocator keeps the buffer until the copy has run). On the CPU it is
    the tensor ``torch.tensor`` builds there.
    """
    import torch

    host = torch.tensor(data, device="cpu")
    if device.type != "cuda":
        return host if host.device == device else host.to(device)
    return host.pin_memory().to(device, non_blocking=True)


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


def _first_line(e: OSError) -> str:
    """Transformers' loading error without its lines of advice (the first line says what failed)."""
    return str(e).strip().split("\n")[0]


def local(path: str) -> bool:
    """Whether ``path`` names a directory rather than a hub id (``name`` or ``namespace/name``)."""
    return path.startswith(("/", ".", "~")) or path.count("/") > 1 or Path(path).exists()


class LoadedModel:
    """A causal LM and its tokenizer, loaded on first use where ``placement`` says."""

    def __init__(self, path: str, placement: Placement, *, system_turn: Literal["plain", "fold"] = "plain",
                 adapter: Adapter | None = None, bounded_template: bool = False, **load_kwargs: Any) -> None:
        """Describe the model at ``path``; nothing is imported or loaded yet.

        Args:
            path: Hub id or local directory.
            placement: Device, dtype, threads and CPU levers (``lingdiag.models.hf.placement``).
            system_turn: What to do when the chat template refuses a system turn (see ``rendered``).
            adapter: Applied once the weights load, before the linear layers are packed (``adapters``).
            bounded_template: Render the chat template in the bounded sandbox (``chat``): for a
                tokenizer from someone else whose template is the only thing read from it.
            **load_kwargs: Passed to both ``from_pretrained`` calls (``trust_remote_code``, ``revision``).
        """
        if local(path) and not Path(path).expanduser().is_dir():
            # Checked here: transformers would call it a malformed hub repo id.
            raise ConfigError(f"no such model directory: {path}")
        self.path = path
        self.placement = placement
        self.system_turn = system_turn
        self.adapter = adapter
        self.bounded_template = bounded_template
        # trust_remote_code False, not absent: absent, transformers asks on the terminal whether to run the code.
        self.load_kwargs = {"trust_remote_code": False, **load_kwargs}
        self._tokenizer: Any = None
        self._model: Any = None

    @cached_property
    def sources(self) -> dict[str, Any]:
        """``from_pretrained``'s arguments: ``load_kwargs``, and for a hub id whether the hub is
        reachable (checked once, so that an offline node fails at once, in one line).
        """
        if local(self.path):
            return self.load_kwargs
        from lingdiag.models.hf.hub import hub_kwargs

        return {**self.load_kwargs, **hub_kwargs(self.path, self.load_kwargs.get("revision"))}

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer, loaded on first use (a pad token is always set)."""
        if self._tokenizer is None:
            sources = self.sources  # before transformers is imported: offline, the error comes at once
            self.placement.before_torch()
            from transformers import AutoTokenizer

            try:
                tokenizer = AutoTokenizer.from_pretrained(self.path, **sources)
            except OSError as e:
                raise BackendError(f"cannot load the tokenizer of {self.path!r}: {_first_line(e)}") from e
            except ValueError as e:
                if "trust_remote_code" not in str(e):
                    raise
                raise ConfigError(f"the tokenizer of {self.path!r} asks to run its own code (auto_map); lingdiag "
                                  "runs none unless told to with --trust-remote-code") from None
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def model(self) -> Any:
        """The transformers model in the placement's dtype and device, eval mode, loaded on first use."""
        if self._model is None:
            sources = self.sources
            placement = self.placement
            placement.before_torch()
            import torch
            from transformers import AutoModelForCausalLM

            placement.before_load()
            dtype = placement.dtype
            stage(f"loading the weights of {self.path} ({dtype}; {placement.describe_threads()})")
            try:
                weights = torch.float32 if dtype == "bfloat16-mixed" else getattr(torch, dtype)
                model: Any = AutoModelForCausalLM.from_pretrained(self.path, dtype=weights, **placement.load_kwargs(),
                                                                  **sources)
            except OSError as e:
                raise BackendError(f"cannot load model {self.path!r}: {_first_line(e)}") from e
            model.eval()
            if self.adapter is not None:
                model = self.adapter.apply(model)
            if placement.packed_linears and dtype != "float16":
                from lingdiag.models.hf.linear import pack_linears

                compute = torch.float32 if dtype == "float32" else torch.bfloat16
                probe = self.tokenizer("The cat sat on the mat because it was tired.", add_special_tokens=False)
                if not pack_linears(model, compute, list(probe["input_ids"])) and dtype == "bfloat16-mixed":
                    raise BackendError(f"--dtype bfloat16-mixed needs oneDNN linear layers in bfloat16, which "
                                       f"{self.path!r}, this torch build or this CPU (bfloat16 packing needs "
                                       "AVX-512 BW/VL/DQ or AVX-NE-CONVERT) cannot use: choose float32 or bfloat16")
            elif dtype == "bfloat16-mixed":
                raise BackendError("--dtype bfloat16-mixed needs packed_linears=true")
            self._model = model
        return self._model

    def adopt(self, model: Any) -> None:
        """Use ``model``, already built and placed, instead of loading one (``HFBackend.from_model``).

        The placement's process-wide levers apply as at load; packing is left to the caller.
        """
        self.placement.before_torch()
        self.placement.before_load()
        self._model = model.eval()

    @property
    def is_loaded(self) -> bool:
        """Whether the weights are loaded (and so torch imported)."""
        return self._model is not None

    @cached_property
    def input_device(self) -> torch.device:
        """Where the model reads its inputs: the input embedding's device (under ``device_map="auto"``
        not ``model.device``, which is the first parameter's).
        """
        return execution_device(self.model.get_input_embeddings())

    @cached_property
    def output_device(self) -> torch.device:
        """Where the LM head computes logits (``execution_device``)."""
        return execution_device(self.model.get_output_embeddings())

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
    def context_length(self) -> int | None:
        """The most positions the model was trained on (``max_position_embeddings``), if its config says."""
        n = self.model.config.get_text_config().to_dict().get("max_position_embeddings")
        return int(n) if isinstance(n, int) and n > 0 else None

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

        switch = self.thinking_switch(request.thinking)
        try:
            return self._apply_template(request.messages, switch), None
        except TemplateError:
            if not any(m.role == "system" for m in request.messages):
                raise
        if self.system_turn == "fold":
            return self._apply_template(fold_system(request.messages), switch), "folded"
        # With few-shot turns, every turn's content in order, each after a blank line.
        return "\n\n".join(m.content for m in request.messages), "plain-fallback"

    def _apply_template(self, messages: Sequence[ChatMessage], switch: dict[str, Any] | None = None) -> str:
        if self.bounded_template:
            from lingdiag.models.hf.chat import render_chat

            return render_chat(self.tokenizer, messages, switch or {}, self.path)
        msgs = [{"role": m.role, "content": m.content} for m in messages]
        return str(self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False,
                                                      **(switch or {})))

    def thinking_switch(self, thinking: Thinking | None) -> dict[str, Any]:
        """The chat-template variables that ask for ``thinking``, found in the template itself.

        ``enable_thinking`` (Qwen3, SmolLM3, Granite) or ``thinking`` (DeepSeek-V3.1, GLM). ``off`` on
        a template without a switch renders as usual.

        Raises:
            ConfigError: thinking asked of a template that has no switch for it, or an effort (a
                server's ``reasoning_effort``: gpt-oss's channels are special tokens this backend's
                decoding drops, so gpt-oss is read from servers only).
        """
        if thinking is None:
            return {}
        if thinking.mode == "effort":
            raise ConfigError(f"{self.path}: --thinking {thinking.name} is a server setting (reasoning_effort); "
                              "on the transformers backend use on, on:N or budget:N (serve gpt-oss with vLLM or "
                              "SGLang to read its channels)")
        template = self.tokenizer.chat_template or ""
        source = template if isinstance(template, str) else " ".join(map(str, template.values()))
        names = [n for n in ("enable_thinking", "thinking") if re.search(rf"\b{n}\b", source)]
        if not names:
            if thinking.thinks:
                raise ConfigError(f"{self.path}: --thinking {thinking.name}: its chat template has no thinking "
                                  "switch (enable_thinking or thinking); it cannot be asked to think")
            return {}
        return {names[0]: thinking.thinks}

    def encode_prompt(self, request: GenerationRequest) -> list[int]:
        """The prompt tokens of ``request``."""
        return self.encode(request)[0]

    def encode(self, request: GenerationRequest, assistant_prefix: str = "") -> tuple[list[int], Rendering | None]:
        """The prompt tokens of ``request``, and its rendering (see ``rendered``); with an
        ``assistant_prefix`` (a chat request's replayed thinking), the prompt continues with it.
        """
        text, rendering = self.rendered(request)
        text = replay(text, assistant_prefix, request.thinking)
        # A chat template writes its own BOS; raw and plain-text prompts get the tokenizer's specials.
        templated = bool(request.messages and self.tokenizer.chat_template) and rendering != "plain-fallback"
        return list(self.tokenizer(text, add_special_tokens=not templated)["input_ids"]), rendering

