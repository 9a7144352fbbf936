"""Hugging Face transformers backend: hub ids, local directories and GGUF files, on CPU.

Float32, greedy, batched. Batches are formed by a token budget over length-sorted
requests (short requests travel in large batches, long ones in small), and answers are
returned in request order.

Shared prefixes are computed once (``prefix_reuse``, on by default; see
``lingdiag.models.hf.batching``): generation requests of one call run their common prompt
prefix (system prompt, few-shot block) at batch size 1, and every row of every batch reads
that one copy of its keys and values (``kv.PrefixedCache``); log-likelihood requests
run as a three-level tree (call-wide prefix, groups sharing more, per-request tails) and
apply the LM head only at the positions that are scored, a chunk at a time. The plain
path (``prefix_reuse=False``) runs every request in full; both give the same greedy text
and argmax, and log-probs equal within 1e-4.

torch and transformers are imported, and the weights loaded, on the first request: a
run answered entirely from the response cache never pays for them.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from lingdiag.errors import BackendError, MissingDependency
from lingdiag.models.base import Capabilities
from lingdiag.models.hf.batching import Group, common_prefix_all, plan_groups
from lingdiag.records import ChatMessage, Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest

if TYPE_CHECKING:
    import torch

MIN_SHARED_PROMPT = 8
"""Shortest common prompt prefix worth a separate forward pass in generation."""
GEN_BATCH_TOKENS = 8192
"""Default budget of a generation batch, prompt plus new tokens per row: it bounds the
key/value cache (rows × tokens); larger batches decode more rows per step."""
LOGLIK_BATCH_TOKENS = 2048
"""Default budget of a log-likelihood batch. Measured on SmolLM2-135M (2 cores, the 4,800
ExpliCa requests): as fast as 8,192 (less padding) with ~0.2 GB less peak memory."""
HEAD_CHUNK = 256
"""Positions per LM-head chunk when scoring: bounds the logits buffer (256 × vocab floats)."""


def keep_gpu_compiler_out() -> None:
    """Make ``import triton`` fail in this process unless torch is already loaded.

    This backend runs on CPU, where triton (a GPU kernel compiler) is never used; but when
    it is installed (xgrammar depends on it) torch imports it eagerly, which costs ~70 MB of
    resident memory for nothing. xgrammar imports it only for CUDA logits.
    """
    if "torch" not in sys.modules:
        sys.modules.setdefault("triton", None)  # type: ignore[arg-type]


def fallback_chat(messages: Sequence[ChatMessage]) -> str:
    """The prompt used for models without a chat template (e.g. base models).

    Each turn becomes ``Role: content`` separated by blank lines, ending with
    ``Assistant:`` so that a base model continues as the answerer.
    """
    turns = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join(turns) + "\n\nAssistant:"


def _stop_window(stop: Sequence[str]) -> int:
    """Tokens to decode to see whether the newest one completes a ``stop`` string (0: none).

    Tokens decode to at least one character, so a stop string ending in the newest token
    lies within the last ``len(stop string)`` tokens; one more absorbs a split character.
    (transformers' own ``stop_strings`` preprocesses the whole vocabulary on every call.)
    """
    return max(len(x) for x in stop) + 1 if stop else 0


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


@dataclass
class _Rows:
    """Batched rows computed so far: their key/value cache and 2D attention mask."""

    cache: Any
    """A transformers ``DynamicCache`` with one batch row per row."""
    mask: torch.Tensor
    """``[rows, slots]``: 1 for real tokens, 0 for padding between and before segments."""
    length: torch.Tensor
    """``[rows]``: real tokens so far, i.e. the position id of each row's next token."""


@dataclass(frozen=True, slots=True)
class _Scored:
    """The scoring view of one log-likelihood request."""

    seq: list[int]
    """Model input: context and continuation tokens without the last one."""
    targets: list[int]
    """``targets[t]`` is the token predicted at position ``t`` (the input shifted by one)."""
    first: int
    """First scored position: the continuation starts at ``first + 1``."""


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
        batch_tokens: int | None = None,
        max_batch: int = 256,
        threads: int | None = None,
        prefix_reuse: bool = True,
    ) -> None:
        """Describe ``model_path`` (a hub id or a directory; with ``gguf_file``, the file in it).

        Nothing is loaded until the first request.

        Args:
            model_path: Hub id or local directory.
            name: Display name (defaults to ``model_path``).
            weights_hash: SHA-256 of the weights file, recorded in ``meta.json`` and cache keys.
            gguf_file: File name of a GGUF model inside ``model_path``.
            trust_remote_code: Allow the model repository's own code; off unless asked.
            batch_tokens: Padded-token budget per batch, for both request kinds (default:
                ``GEN_BATCH_TOKENS`` for generation, ``LOGLIK_BATCH_TOKENS`` for log-likelihood).
            max_batch: Upper bound on rows per forward batch.
            threads: Torch CPU threads (default: all cores).
            prefix_reuse: Compute shared prompt prefixes once (see the module docstring).
        """
        missing = [p for p in ("torch", "transformers") if find_spec(p) is None]
        if missing:
            raise MissingDependency("the transformers backend", "hf", ["torch==2.13.0", "transformers"])
        self.name = name or model_path
        self.gen_batch_tokens = batch_tokens or GEN_BATCH_TOKENS
        self.loglik_batch_tokens = batch_tokens or LOGLIK_BATCH_TOKENS
        self.max_batch = max_batch
        self.prefix_reuse = prefix_reuse
        self._path = model_path
        self._threads = threads
        self._load_kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if gguf_file:
            self._load_kwargs["gguf_file"] = gguf_file
        self._identity = {"backend": "hf", "model": self.name, "path": model_path, "weights_sha256": weights_hash}
        n_params = stored_param_count(model_path)
        if n_params:
            self._identity["n_params"] = str(n_params)
        self._tokenizer: Any = None
        self._model: Any = None
        self._head_checked: bool | None = None
        self._head_buffer: torch.Tensor | None = None
        self._usage: Counter[str] = Counter()

    @property
    def identity(self) -> dict[str, str]:
        """Backend, model name, path and weights hash."""
        return dict(self._identity)

    def usage(self) -> dict[str, int]:
        """Work done since the backend was built, for ``meta.json`` and the benchmark.

        Returns:
            ``forward_tokens``: real tokens run through the transformer body (a shared prefix
            counts once; generated tokens count once each); ``padded_tokens``: the same plus
            padding; ``head_positions``: positions the LM head computed logits for.
        """
        return {k: self._usage[k] for k in ("forward_tokens", "padded_tokens", "head_positions")}

    @property
    def capabilities(self) -> Capabilities:
        """Generation and log-likelihood; constrained decoding is added by the constraint module."""
        from lingdiag.models.hf import constraints

        return Capabilities(generate=True, loglikelihood=True, constrained=constraints.available(), chat=True)

    # -- loading ----------------------------------------------------------------------
    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer, loaded on first use (a pad token is always set)."""
        if self._tokenizer is None:
            keep_gpu_compiler_out()
            from transformers import AutoTokenizer

            try:
                tokenizer = AutoTokenizer.from_pretrained(self._path, **self._load_kwargs)
            except OSError as e:
                raise BackendError(f"cannot load the tokenizer of {self._path!r}: {e}") from e
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def model(self) -> Any:
        """The transformers model in float32, eval mode, loaded on first use."""
        if self._model is None:
            keep_gpu_compiler_out()
            import torch
            from transformers import AutoModelForCausalLM

            torch.set_num_threads(self._threads or os.cpu_count() or 1)
            try:
                model: Any = AutoModelForCausalLM.from_pretrained(self._path, dtype=torch.float32, **self._load_kwargs)
            except OSError as e:
                raise BackendError(f"cannot load model {self._path!r}: {e}") from e
            self._model = model.eval()
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
    def _window(self) -> int | None:
        # Sliding-window layers count cache slots, and prefix reuse adds padding slots
        # between segments; batches that could reach the window take the plain path.
        window = self.model.config.get_text_config().to_dict().get("sliding_window")
        return int(window) if window else None

    @cached_property
    def _softcap(self) -> float | None:
        # Gemma-family configs cap the final logits; other architectures have no such field.
        cap = self.model.config.get_text_config().to_dict().get("final_logit_softcapping")
        return float(cap) if cap else None

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
            prompts = [encoded[i] for i in idx]
            shared = self._shared_prompt(prompts, max_new)
            lengths = [len(p) + max_new for p in prompts]
            for batch in token_budget_batches(lengths, self.gen_batch_tokens, self.max_batch):
                rows = [idx[b] for b in batch]
                answers = self._generate_batch([encoded[i] for i in rows], max_new, stop, constraint, shared)
                for i, g in zip(rows, answers, strict=True):
                    out[i] = g
        return [g for g in out if g is not None]

    def _shared_prompt(self, prompts: list[list[int]], max_new: int) -> tuple[list[int], _Rows] | None:
        """The prompts' common prefix and its one-row cache, when worth reusing."""
        if not self.prefix_reuse or len(prompts) < 2:
            return None
        # Every row keeps at least one token of its own to start generating from.
        n = min(common_prefix_all(prompts), min(len(p) for p in prompts) - 1)
        window = self._window
        if n < MIN_SHARED_PROMPT or (window and 2 * max(len(p) for p in prompts) + max_new > window):
            return None
        prefix = prompts[0][:n]
        rows, _ = self._extend(None, [0], [prefix])
        assert rows is not None
        return prefix, rows

    def _generate_batch(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...],
                        constraint: Any, shared: tuple[list[int], _Rows] | None) -> list[Generation]:
        """Greedy decoding of one batch, dropping finished rows as it goes.

        transformers' ``generate`` keeps a finished row in the batch until the longest one
        ends; answers of diagnostic prompts range from one word to hundreds of tokens, so
        that can multiply the decoding work several times. Here, once an eighth of the
        live rows are done, the batch is compacted (their cache rows dropped). With a
        constraint the rows stay (the grammar processor keeps per-row state by position)
        and finished rows receive padding, as in ``generate``.
        """
        import torch
        from transformers import DynamicCache

        from lingdiag.models.hf.kv import PrefixedCache

        pad = self.tokenizer.pad_token_id
        eos_ids = self.eos_ids
        n = len(prompts)
        if shared is None:
            skip, width = 0, max(len(p) for p in prompts)
            ids = [[pad] * (width - len(p)) + p for p in prompts]
            mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
            cache = DynamicCache(config=self.model.config)
        else:
            # [shared prefix][padding][own tokens]: the prefix slots come from the cache;
            # positions follow the mask, so padding does not shift them.
            prefix, rows = shared
            skip = len(prefix)
            tails = [p[skip:] for p in prompts]
            tail_width = max(len(t) for t in tails)
            ids = [[pad] * (tail_width - len(t)) + t for t in tails]
            mask = [[1] * skip + [0] * (tail_width - len(t)) + [1] * len(t) for t in tails]
            cache = PrefixedCache(rows.cache)
        attn = torch.tensor(mask)
        inputs = torch.tensor(ids)
        positions = (attn.cumsum(1) - 1).clamp(min=0)[:, skip:]
        processors = self._constraint_processors(constraint, n)
        # A sliding-window cache rebuilt from its rows would forget how many tokens it has seen.
        window = self._window
        evict = not processors and not (window and attn.shape[1] + max_new > window)
        stop_window = _stop_window(stop)
        live = list(range(n))  # batch row -> request row
        done = [False] * n
        tokens: list[list[int]] = [[] for _ in range(n)]
        logprobs: list[list[float]] = [[] for _ in range(n)]
        self._usage.update(forward_tokens=sum(len(p) - skip for p in prompts), padded_tokens=inputs.numel())
        with torch.inference_mode():
            for step in range(max_new):
                out = self.model(input_ids=inputs, attention_mask=attn, position_ids=positions,
                                 past_key_values=cache, use_cache=True, logits_to_keep=1)
                cache, scores = out.past_key_values, out.logits[:, -1, :].float()
                self._usage["head_positions"] += len(live)
                for proc in processors:
                    scores = proc(inputs[:, -1:], scores)
                best = scores.max(dim=-1)
                lps = (best.values - torch.logsumexp(scores, dim=-1)).tolist()
                picks = best.indices.tolist()
                for b, r in enumerate(live):
                    if done[r]:
                        picks[b] = pad
                        continue
                    tokens[r].append(picks[b])
                    logprobs[r].append(round(lps[b], 6))
                    tail = self.tokenizer.decode(tokens[r][-stop_window:], skip_special_tokens=True) if stop else ""
                    done[r] = picks[b] in eos_ids or any(x in tail for x in stop)
                n_done = sum(done[r] for r in live)
                if n_done == len(live) or step == max_new - 1:
                    break
                if evict and n_done >= max(1, len(live) // 8):
                    kept = [b for b, r in enumerate(live) if not done[r]]
                    keep = torch.tensor(kept, dtype=torch.long)
                    cache.batch_select_indices(keep)  # layer by layer: no second copy of the cache
                    attn, positions = attn.index_select(0, keep), positions.index_select(0, keep)
                    picks, live = [picks[b] for b in kept], [live[b] for b in kept]
                inputs = torch.tensor(picks)[:, None]
                attn = torch.cat([attn, torch.ones(len(live), 1, dtype=attn.dtype)], dim=1)
                positions = positions[:, -1:] + 1
                self._usage.update(forward_tokens=sum(not done[r] for r in live), padded_tokens=len(live))
        results = []
        for r, prompt in enumerate(prompts):
            row = tokens[r]
            content = row[:-1] if row and row[-1] in eos_ids else row
            text = self.tokenizer.decode(content, skip_special_tokens=True)
            for x in stop:
                if x in text:
                    text = text[:text.index(x)]
            results.append(Generation(text=text, n_tokens=len(row), prompt_tokens=len(prompt),
                                      logprobs=tuple(logprobs[r])))
        return results

    def _constraint_processors(self, constraint: Any, batch: int) -> list[Any]:
        if constraint is None:
            return []
        from lingdiag.models.hf.constraints import logits_processor

        return [logits_processor(constraint, self.tokenizer, batch,
                                 vocab_size=int(self.model.get_output_embeddings().weight.shape[0]),
                                 stop_ids=sorted(self.eos_ids))]

    # -- shared forward passes ----------------------------------------------------------
    def _expand_cache(self, cache: Any, rows: torch.Tensor) -> Any:
        """A new cache whose row ``r`` copies row ``rows[r]`` of ``cache`` (which is not modified)."""
        from transformers import DynamicCache

        layers = [(layer.keys.index_select(0, rows), layer.values.index_select(0, rows)) for layer in cache.layers]
        return DynamicCache(ddp_cache_data=layers, config=self.model.config)

    def _extend(self, base: _Rows | None, parents: Sequence[int],
                segments: Sequence[Sequence[int]], keep: bool = True) -> tuple[_Rows | None, torch.Tensor]:
        """Run one level of the prefix tree.

        Args:
            base: Rows computed so far (None to start from scratch).
            parents: For each new row, the row of ``base`` it continues.
            segments: For each new row, its tokens (non-empty), left-padded to one width.
            keep: Whether the new rows' cache is needed later; a last level reads its
                parents' rows one layer at a time instead of copying them (``RowView``).

        Returns:
            The new rows (None unless ``keep``) and their last hidden states ``[rows, width, hidden]``.
        """
        import torch
        from transformers import DynamicCache

        from lingdiag.models.hf.kv import RowView

        width = max(len(s) for s in segments)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(s)) + list(s) for s in segments])
        seg_mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in segments])
        if base is None:
            start = torch.zeros(len(segments), dtype=torch.long)
            mask, cache = seg_mask, DynamicCache(config=self.model.config)
        else:
            idx = torch.tensor(list(parents), dtype=torch.long)
            start = base.length.index_select(0, idx)
            mask = torch.cat([base.mask.index_select(0, idx), seg_mask], dim=1)
            cache = self._expand_cache(base.cache, idx) if keep else RowView(base.cache, idx)
        positions = (start[:, None] + seg_mask.cumsum(1) - 1).clamp(min=0)
        self._usage.update(forward_tokens=int(seg_mask.sum()), padded_tokens=ids.numel())
        with torch.inference_mode():
            out = self.model.base_model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                        past_key_values=cache, use_cache=True)
        rows = _Rows(out.past_key_values, mask, start + seg_mask.sum(1)) if keep else None
        return rows, out.last_hidden_state

    def _head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits from up to ``HEAD_CHUNK`` final hidden states, as the model's LM head computes them.

        The result is a view of a buffer reused by the next call (callers may modify it;
        ``loglikelihood`` drops the buffer when it returns): a fresh logits tensor (50 MB at
        256 × 49k) comes from newly mapped pages every time, and faulting them in made the LM
        head run at ~110 GFLOP/s instead of ~150 on 2 cores.
        """
        import torch

        head = self.model.get_output_embeddings()
        n, vocab = hidden.shape[0], head.weight.shape[0]
        if self._head_buffer is None or self._head_buffer.shape[0] < n:
            self._head_buffer = torch.empty(max(n, HEAD_CHUNK), vocab, dtype=head.weight.dtype)
        logits = self._head_buffer[:n]
        if head.bias is None:
            torch.mm(hidden, head.weight.t(), out=logits)
        else:
            torch.addmm(head.bias, hidden, head.weight.t(), out=logits)
        logits = logits.float()
        if self._softcap:
            logits.div_(self._softcap).tanh_().mul_(self._softcap)
        return logits

    def _head_matches_model(self) -> bool:
        """Whether ``_head`` reproduces the model's logits (checked once per model).

        Scoring only selected positions needs the LM head outside the model's forward; an
        architecture that transforms logits in ways ``_head`` does not know takes the plain path.
        """
        if self._head_checked is None:
            import torch

            probe = self.tokenizer("The cat sat", add_special_tokens=False)["input_ids"]
            ids = torch.tensor([[self.prefix_id, *probe]])
            with torch.inference_mode():
                full = self.model(input_ids=ids).logits[0].float()
                mine = self._head(self.model.base_model(input_ids=ids).last_hidden_state[0])
            self._head_checked = bool(torch.allclose(full, mine, atol=1e-4, rtol=1e-4))
        return self._head_checked

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
        if not requests:
            return []
        scored = [_Scored(seq=(ctx + cont)[:-1], targets=(ctx + cont)[1:], first=len(ctx) - 1) for ctx, cont in split]
        window = self._window
        longest = max(len(s.seq) for s in scored)
        try:
            if self.prefix_reuse and not (window and 2 * longest > window) and self._head_matches_model():
                totals, wrong = self._loglik_tree(scored)
                return [LogLikelihood(logprob=float(totals[i]), n_tokens=len(cont), is_greedy=int(wrong[i]) == 0)
                        for i, (_, cont) in enumerate(split)]
        finally:
            self._head_buffer = None  # 268 MB for Gemma-3's vocabulary: not kept between calls
        return self._loglik_plain(split)

    def _loglik_plain(self, split: list[tuple[list[int], list[int]]]) -> list[LogLikelihood]:
        """Every request in full, logits at every position (the reference path)."""
        import torch

        seqs = [(ctx + cont)[:-1] for ctx, cont in split]
        out: list[LogLikelihood | None] = [None] * len(split)
        pad = self.tokenizer.pad_token_id
        for batch in token_budget_batches([len(s) for s in seqs], self.loglik_batch_tokens, self.max_batch):
            width = max(len(seqs[i]) for i in batch)
            ids = torch.tensor([seqs[i] + [pad] * (width - len(seqs[i])) for i in batch])
            mask = torch.tensor([[1] * len(seqs[i]) + [0] * (width - len(seqs[i])) for i in batch])
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits
            self._usage.update(forward_tokens=int(mask.sum()), padded_tokens=ids.numel(), head_positions=ids.numel())
            for row, i in enumerate(batch):
                cont = split[i][1]
                end = len(seqs[i])
                # In float64: a float32 log-softmax over the vocabulary is off by ~1e-5 per token.
                lp = torch.log_softmax(logits[row, end - len(cont):end].double(), dim=-1)
                target = torch.tensor(cont)
                picked = lp.gather(1, target[:, None]).squeeze(1)
                out[i] = LogLikelihood(logprob=float(picked.sum()), n_tokens=len(cont),
                                       is_greedy=bool((lp.argmax(-1) == target).all()))
        return [r for r in out if r is not None]

    def _loglik_tree(self, scored: list[_Scored]) -> tuple[torch.Tensor, torch.Tensor]:
        """Summed log-probs and count of non-greedy tokens per request, sharing prefixes."""
        import torch

        seqs = [s.seq for s in scored]
        totals = torch.zeros(len(scored), dtype=torch.float64)
        wrong = torch.zeros(len(scored), dtype=torch.long)
        root = common_prefix_all(seqs)
        root_rows = None
        if root:
            root_rows, hidden = self._extend(None, [0], [seqs[0][:root]])
            self._score(hidden, [(0, 0, 0, root, i) for i in range(len(scored))], scored, totals, wrong)
        for batch in self._pack(plan_groups(seqs, root, self.max_batch), seqs, root):
            # Level 1: one row per group, its shared segment (the whole tail of a lone request).
            grouped = [g for g in batch if g.end > root]
            if not grouped:
                continue
            level1, hidden = self._extend(root_rows, [0] * len(grouped), [seqs[g.members[0]][root:g.end]
                                                                          for g in grouped])
            width = hidden.shape[1]
            spans = [(row, width - (g.end - root), root, g.end, i)
                     for row, g in enumerate(grouped) for i in g.members]
            self._score(hidden, spans, scored, totals, wrong)
            # Level 2: one row per member with tokens beyond its group's segment.
            tails = [(row, g.end, i) for row, g in enumerate(grouped) for i in g.members if len(seqs[i]) > g.end]
            if not tails:
                continue
            _, hidden = self._extend(level1, [row for row, _, _ in tails], [seqs[i][end:] for _, end, i in tails],
                                     keep=False)
            width = hidden.shape[1]
            spans = [(row, width - (len(seqs[i]) - end), end, len(seqs[i]), i)
                     for row, (_, end, i) in enumerate(tails)]
            self._score(hidden, spans, scored, totals, wrong)
        return totals, wrong

    def _pack(self, groups: list[Group], seqs: list[list[int]], root: int) -> list[list[Group]]:
        """Batches of groups within the token budget, similar tails together (less padding)."""
        def tail(g: Group) -> int:
            return max(len(seqs[i]) for i in g.members) - g.end

        groups = sorted(groups, key=lambda g: (-tail(g), -(g.end - root)))
        batches: list[list[Group]] = []
        rows = longest = 0
        for g in groups:
            length = max(len(seqs[i]) for i in g.members)
            if batches and rows + len(g.members) <= self.max_batch and \
                    max(longest, length) * (rows + len(g.members)) <= self.loglik_batch_tokens:
                batches[-1].append(g)
                rows, longest = rows + len(g.members), max(longest, length)
            else:
                batches.append([g])
                rows, longest = len(g.members), length
        return batches

    def _score(self, hidden: torch.Tensor, spans: list[tuple[int, int, int, int, int]], scored: list[_Scored],
               totals: torch.Tensor, wrong: torch.Tensor) -> None:
        """Add the log-probs that one level's hidden states decide to ``totals``/``wrong``.

        Args:
            hidden: ``[rows, width, hidden]`` from ``_extend``.
            spans: ``(row, column of start, start, end, request)``: the row holds the
                request's positions ``[start, end)`` from that column on.
            scored: The requests.
            totals: Summed log-probs per request (updated).
            wrong: Count of targets that are not the argmax, per request (updated).
        """
        import torch

        unique: dict[tuple[int, int], int] = {}
        pair_pos: list[int] = []
        pair_target: list[int] = []
        pair_request: list[int] = []
        for row, col, start, end, i in spans:
            s = scored[i]
            for t in range(max(start, s.first), end):
                key = (row, col + t - start)
                pair_pos.append(unique.setdefault(key, len(unique)))
                pair_target.append(s.targets[t])
                pair_request.append(i)
        if not unique:
            return
        keys = list(unique)
        self._usage["head_positions"] += len(keys)
        picked = hidden[torch.tensor([r for r, _ in keys]), torch.tensor([c for _, c in keys])]
        pos, target, request = (torch.tensor(x) for x in (pair_pos, pair_target, pair_request))
        with torch.inference_mode():
            for lo in range(0, len(keys), HEAD_CHUNK):
                logits = self._head(picked[lo:lo + HEAD_CHUNK])
                sel = ((pos >= lo) & (pos < lo + HEAD_CHUNK)).nonzero().squeeze(1)
                local, tgt = pos[sel] - lo, target[sel]
                # One pass for max and argmax, then exp in place: the logits buffer is the
                # largest tensor here, and logsumexp plus argmax would read it and allocate
                # its size several times.
                best, argmax = logits.max(dim=-1)
                target_logit = logits[local, tgt]
                lse = best + logits.sub_(best[:, None]).exp_().sum(dim=-1).log_()
                totals.index_add_(0, request[sel], (target_logit - lse[local]).double())
                wrong.index_add_(0, request[sel], (argmax[local] != tgt).long())

