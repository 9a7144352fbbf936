"""Hugging Face transformers backend: hub ids, local directories and GGUF files, on CPU.

Float32, greedy, left-padded batched generation; log-likelihoods from one forward pass
per batch. Batches are formed by a token budget over length-sorted requests (short
requests travel in large batches, long ones in small), and answers are returned in
request order.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.errors import BackendError, MissingDependency
from lingdiag.models.base import Capabilities
from lingdiag.records import ChatMessage, Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest

try:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LogitsProcessor
except ImportError as e:  # pragma: no cover - exercised only without the hf extra
    raise MissingDependency("the transformers backend", "hf", ["torch==2.13.0", "transformers"]) from e


def fallback_chat(messages: Sequence[ChatMessage]) -> str:
    """The prompt used for models without a chat template (e.g. base models).

    Each turn becomes ``Role: content`` separated by blank lines, ending with
    ``Assistant:`` so that a base model continues as the answerer.
    """
    turns = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join(turns) + "\n\nAssistant:"


class _GreedyLogprobs(LogitsProcessor):  # type: ignore[misc]
    """Records the log-probability of each greedy choice without storing full score tensors."""

    def __init__(self) -> None:
        self.steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self.steps.append(scores.max(dim=-1).values - torch.logsumexp(scores.float(), dim=-1))
        return scores


def token_budget_batches(lengths: Sequence[int], budget: int, max_batch: int = 64) -> list[list[int]]:
    """Group indices, longest first, so that ``batch size × longest length ≤ budget``.

    Args:
        lengths: Token length of each request (including tokens to be generated).
        budget: Maximum padded tokens per batch.
        max_batch: Upper bound on requests per batch.

    Returns:
        Batches of indices into ``lengths``; every index appears once.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < max_batch and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


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


class HFBackend:
    """A causal LM from transformers, run on the CPU in float32."""

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        weights_hash: str = "",
        gguf_file: str | None = None,
        trust_remote_code: bool = False,
        batch_tokens: int = 8192,
        threads: int | None = None,
    ) -> None:
        """Load ``model_path`` (a hub id or a directory; with ``gguf_file``, the file in it).

        Args:
            model_path: Hub id or local directory.
            name: Display name (defaults to ``model_path``).
            weights_hash: SHA-256 of the weights file, recorded in ``meta.json`` and cache keys.
            gguf_file: File name of a GGUF model inside ``model_path``.
            trust_remote_code: Allow the model repository's own code; off unless asked.
            batch_tokens: Padded-token budget per forward batch.
            threads: Torch CPU threads (default: all cores).
        """
        torch.set_num_threads(threads or os.cpu_count() or 1)
        kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_path, **kwargs)
            self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32, **kwargs)
        except OSError as e:
            raise BackendError(f"cannot load model {model_path!r}: {e}") from e
        self.model.eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.name = name or model_path
        self.batch_tokens = batch_tokens
        self._identity = {"backend": "hf", "model": self.name, "path": model_path, "weights_sha256": weights_hash}
        n_params = stored_param_count(model_path)
        if n_params:
            self._identity["n_params"] = str(n_params)
        eos = self.model.generation_config.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.eos_ids.add(self.tokenizer.eos_token_id)
        bos = self.tokenizer.bos_token_id
        self.prefix_id = bos if bos is not None else self.tokenizer.eos_token_id

    @property
    def identity(self) -> dict[str, str]:
        """Backend, model name, path and weights hash."""
        return dict(self._identity)

    @property
    def capabilities(self) -> Capabilities:
        """Generation and log-likelihood; constrained decoding is added by the constraint module."""
        from lingdiag.models import constraints

        return Capabilities(generate=True, loglikelihood=True, constrained=constraints.available(), chat=True)

    # -- generation -----------------------------------------------------------------
    def render(self, request: GenerationRequest) -> str:
        """The exact prompt text for ``request`` (chat template applied)."""
        if not request.messages:
            return request.prompt or ""
        if self.tokenizer.chat_template:
            msgs = [{"role": m.role, "content": m.content} for m in request.messages]
            return str(self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False))
        return fallback_chat(request.messages)

    def _encode_prompt(self, request: GenerationRequest) -> list[int]:
        # A chat template writes its own BOS; raw prompts get the tokenizer's specials.
        specials = not (request.messages and self.tokenizer.chat_template)
        return list(self.tokenizer(self.render(request), add_special_tokens=specials)["input_ids"])

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy generation, batched by a token budget; see ``Backend.generate``."""
        out: list[Generation | None] = [None] * len(requests)
        groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.max_new_tokens, r.stop, r.constraint)].append(i)
        encoded = [self._encode_prompt(r) for r in requests]
        for (max_new, stop, constraint), idx in groups.items():
            lengths = [len(encoded[i]) + max_new for i in idx]
            for batch in token_budget_batches(lengths, self.batch_tokens):
                rows = [idx[b] for b in batch]
                for i, g in zip(rows, self._generate_batch([encoded[i] for i in rows], max_new, stop, constraint),
                                strict=True):
                    out[i] = g
        return [g for g in out if g is not None]

    def _generate_batch(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...],
                        constraint: Any) -> list[Generation]:
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        recorder = _GreedyLogprobs()
        processors = [*self._constraint_processors(constraint, len(prompts)), recorder]
        config = GenerationConfig(do_sample=False, max_new_tokens=max_new, pad_token_id=pad,
                                  eos_token_id=sorted(self.eos_ids), num_beams=1, stop_strings=list(stop) or None)
        with torch.inference_mode():
            seqs = self.model.generate(
                input_ids=ids, attention_mask=mask, generation_config=config, logits_processor=processors,
                tokenizer=self.tokenizer if stop else None,
            )
        new = seqs[:, width:].tolist()
        steps = torch.stack(recorder.steps, dim=1).tolist() if recorder.steps else [[] for _ in prompts]
        results = []
        for row, lps, prompt in zip(new, steps, prompts, strict=True):
            n = next((k + 1 for k, t in enumerate(row) if t in self.eos_ids), len(row))
            content = row[:n - 1] if n and row[n - 1] in self.eos_ids else row[:n]
            text = self.tokenizer.decode(content, skip_special_tokens=True)
            for s in stop:
                if s in text:
                    text = text[:text.index(s)]
            results.append(Generation(text=text, n_tokens=n, prompt_tokens=len(prompt),
                                      logprobs=tuple(round(x, 6) for x in lps[:n])))
        return results

    def _constraint_processors(self, constraint: Any, batch: int) -> list[Any]:
        if constraint is None:
            return []
        from lingdiag.models.constraints import logits_processor

        return [logits_processor(constraint, self.tokenizer, batch,
                                 vocab_size=int(self.model.get_output_embeddings().weight.shape[0]),
                                 stop_ids=sorted(self.eos_ids))]

    # -- log-likelihood ---------------------------------------------------------------
    def _split(self, r: LoglikelihoodRequest) -> tuple[list[int], list[int]]:
        context, continuation = r.context, r.continuation
        # A space at the end of the context belongs to the continuation (lm-eval's rule).
        n_spaces = len(context) - len(context.rstrip(" "))
        if n_spaces:
            context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
        if not context:
            cont = list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
            return [self.prefix_id], cont
        whole = list(self.tokenizer(context + continuation)["input_ids"])
        ctx = list(self.tokenizer(context)["input_ids"])
        return ctx, whole[len(ctx):]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """Summed continuation log-probs, batched by a token budget; see ``Backend.loglikelihood``."""
        split = [self._split(r) for r in requests]
        for r, (_, cont) in zip(requests, split, strict=True):
            if not cont:
                raise BackendError(f"log-likelihood request with an empty continuation: {r!r}")
        seqs = [(ctx + cont)[:-1] for ctx, cont in split]
        out: list[LogLikelihood | None] = [None] * len(requests)
        pad = self.tokenizer.pad_token_id
        for batch in token_budget_batches([len(s) for s in seqs], self.batch_tokens):
            width = max(len(seqs[i]) for i in batch)
            ids = torch.tensor([seqs[i] + [pad] * (width - len(seqs[i])) for i in batch])
            mask = torch.tensor([[1] * len(seqs[i]) + [0] * (width - len(seqs[i])) for i in batch])
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits
            for row, i in enumerate(batch):
                cont = split[i][1]
                end = len(seqs[i])
                lp = torch.log_softmax(logits[row, end - len(cont):end].float(), dim=-1)
                target = torch.tensor(cont)
                picked = lp.gather(1, target[:, None]).squeeze(1)
                out[i] = LogLikelihood(logprob=float(picked.sum()), n_tokens=len(cont),
                                       is_greedy=bool((lp.argmax(-1) == target).all()))
        return [r for r in out if r is not None]
