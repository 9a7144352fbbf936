"""Greedy or seeded sampled decoding: batches by a token budget, finished rows dropped and their places
refilled, a shared prompt run once.

A request with ``sampling`` (the temperature axis), or a constraint with a ``sample_seed``, draws each
token instead of taking the best (:class:`Draw`): at its temperature, within the backend's top-k and
top-p, from a generator of its own seeded by the seed and its prompt, on the CPU. A row's tokens so do
not depend on the rows beside it, and the same seed gives the same tokens on the same device and dtype,
on the dynamic cache and the static one alike.

Generation requests of one call run their common prompt prefix (system prompt, few-shot
block) at batch size 1, and every row of every batch reads that one copy of its keys and
values (``kv.PrefixedCache``).

Answers range from one word to hundreds of chain-of-thought tokens. With **continuous
batching** (``Budget.continuous``, the default) a batch is a pool: rows whose answers end
leave it, and waiting requests are prefilled and merged in (``_Batch.merge``), so the
batch stays full until the queue is empty instead of thinning out behind its longest
answer. Constrained decoding keeps fixed batches (its grammar state is per batch row).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from lingdiag.errors import BackendError
from lingdiag.models.base import cut_at_stop
from lingdiag.models.hf.batching import Budget, common_prefix_all, token_budget_batches
from lingdiag.models.hf.forward import Forward, Rows
from lingdiag.models.hf.load import on_device
from lingdiag.models.progress import tick
from lingdiag.records import Constraint, Generation, GenerationRequest, Sampling

if TYPE_CHECKING:
    import torch

MIN_SHARED_PROMPT = 8
"""Shortest common prompt prefix worth a separate forward pass in generation."""
SharedPrompt = tuple[list[int], Rows]
"""A call's common prompt prefix and its one-row cache."""


def stop_window(stop: Sequence[str]) -> int:
    """Tokens to decode to see whether the newest one completes a ``stop`` string (0: none).

    Tokens decode to at least one character, so a stop string ending in the newest token
    lies within the last ``len(stop string)`` tokens; one more absorbs a split character.
    (transformers' own ``stop_strings`` preprocesses the whole vocabulary on every call.)
    """
    return max(len(x) for x in stop) + 1 if stop else 0


@dataclass
class _Batch:
    """One batch being decoded: the next step's inputs and what each row produced so far."""

    inputs: torch.Tensor
    """``[live rows, tokens]``: what the next forward pass reads."""
    attn: torch.Tensor
    """``[live rows, slots]``: the attention mask, cache slots included."""
    positions: torch.Tensor
    """Position ids of ``inputs``."""
    cache: Any
    """The key/value cache of the live rows."""
    live: list[int]
    """Batch row -> request row."""
    done: list[bool]
    """Per request row: finished (EOS or stop string)."""
    tokens: list[list[int]]
    """Per request row: generated tokens."""
    logprobs: list[list[float]]
    """Per request row: log-prob of each generated token."""
    generators: list[Any] = field(default_factory=list)
    """Per request row: its random generator, where the call samples (empty: greedy)."""
    draw: Draw | None = None
    """How a sampled call draws its tokens (None: greedy)."""

    skip: int = 0
    """Leading mask slots held by a shared prompt prefix (``kv.PrefixedCache``; 0 without one)."""

    def evict(self, picks: list[int]) -> list[int]:
        """Drop the finished rows (their cache rows too); return the live rows' picks."""
        import torch

        kept = [b for b, r in enumerate(self.live) if not self.done[r]]
        self.keep(torch.tensor(kept, dtype=torch.long, device=self.attn.device))
        self.live = [self.live[b] for b in kept]
        return [picks[b] for b in kept]

    def keep(self, rows: torch.Tensor) -> None:
        """Keep batch rows ``rows`` of the cache and the mask."""
        for layer in self.cache.layers:  # layer by layer, each on its device: no second copy of the cache
            layer.batch_select_indices(on_device(rows, layer.keys.device))
        self.attn, self.positions = self.attn.index_select(0, rows), self.positions.index_select(0, rows)

    def trim(self) -> None:
        """Drop the cache slots that are padding in every live row.

        A row's own slots are the last ones of the batch; merged rows are padded on the left
        to the batch's width. Once the longest rows have left, the leading slots belong to no
        one, and without trimming the width would grow with every step the pool lives.
        """
        own = self.attn[:, self.skip:]
        start = int(own.any(0).int().argmax())
        if start == 0:
            return
        for layer in self.cache.layers:
            layer.keys, layer.values = layer.keys[:, :, start:], layer.values[:, :, start:]
        self.attn = torch_cat_columns(self.attn[:, :self.skip], own[:, start:])

    def merge(self, other: _Batch, picks: list[int], other_picks: list[int]) -> list[int]:
        """Append ``other``'s rows (just prefilled on the same shared prefix) to this batch.

        Each side's own slots are padded on the left to the wider one, so every row keeps
        its tokens last; positions are per row, so padding shifts nothing. Returns the picks
        of the merged rows, in their new order.
        """
        import torch

        width = max(self.attn.shape[1], other.attn.shape[1]) - self.skip
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=True):
            mine.keys = torch.cat([_pad_slots(mine.keys, width), _pad_slots(theirs.keys, width)])
            mine.values = torch.cat([_pad_slots(mine.values, width), _pad_slots(theirs.values, width)])
        prefix = self.attn[:1, :self.skip].expand(len(self.live) + len(other.live), -1)
        own = torch.cat([_pad_mask(self.attn[:, self.skip:], width), _pad_mask(other.attn[:, self.skip:], width)])
        self.attn = torch_cat_columns(prefix, own)
        self.positions = torch.cat([self.positions[:, -1:], other.positions[:, -1:]])
        self.live += other.live
        return picks + other_picks

    def advance(self, picks: list[int]) -> None:
        """Make ``picks`` the next step's inputs."""
        import torch

        self.inputs = torch.tensor(picks, device=self.inputs.device)[:, None]
        ones = torch.ones(len(self.live), 1, dtype=self.attn.dtype, device=self.attn.device)
        self.attn = torch.cat([self.attn, ones], dim=1)
        self.positions = self.positions[:, -1:] + 1


@dataclass
class _SlotBatch(_Batch):
    """A batch of a fixed number of rows and slots (``kv.SlotCache``): its shapes change only when it halves.

    Each row holds its tokens from slot 0 (the shared prompt's, then its own) and writes the next
    one into the slot after them, so nothing is copied as answers grow. A finished row keeps its
    place, masked, until a waiting request is prefilled and copied into it (``place``).
    """

    counts: torch.Tensor | None = None
    """``[rows]``: the slots each row fills, which are also its next token's slot and position."""

    @classmethod
    def of(cls, first: _Batch, slots: int) -> _SlotBatch:
        """Room for ``first``'s rows (just prefilled) with ``slots`` each, the shared prompt already in."""
        import torch

        from lingdiag.models.hf.kv import SlotCache

        rows = len(first.live)
        cache = SlotCache(first.cache, rows, slots)
        for mine, theirs in zip(cache.slot_layers, first.cache.layers, strict=True):
            if first.skip:  # a PrefixedLayer: the prompt every row shares, once per row here
                mine.keys[:, :, :first.skip] = theirs.prefix_keys
                mine.values[:, :, :first.skip] = theirs.prefix_values
        device = first.attn.device
        return cls(inputs=first.inputs[:, -1:], attn=first.attn.new_zeros(rows, slots),
                   positions=first.positions[:, -1:], cache=cache, live=list(first.live), done=first.done,
                   tokens=first.tokens, logprobs=first.logprobs, generators=first.generators, draw=first.draw,
                   skip=first.skip,
                   counts=torch.zeros(rows, dtype=torch.long, device=device))

    def place(self, rows: list[int], new: _Batch, picks: list[int], new_picks: list[int]) -> list[int]:
        """Copy ``new``'s rows (prefilled on the same shared prompt) into batch rows ``rows``; return the picks."""
        assert self.counts is not None
        own = new.attn[:, new.skip:]
        width = own.shape[1]
        lengths = own.sum(1).tolist()
        for mine, theirs in zip(self.cache.slot_layers, new.cache.layers, strict=True):
            for i, (row, n) in enumerate(zip(rows, lengths, strict=True)):
                mine.keys[row, :, self.skip:self.skip + n] = theirs.keys[i, :, width - n:]
                mine.values[row, :, self.skip:self.skip + n] = theirs.values[i, :, width - n:]
        picks = list(picks) or [0] * len(self.live)
        for i, (row, n) in enumerate(zip(rows, lengths, strict=True)):
            self.attn[row] = 0
            self.attn[row, :self.skip + n] = 1
            self.counts[row] = self.skip + n
            self.live[row], picks[row] = new.live[i], new_picks[i]
        return picks

    def keep(self, rows: torch.Tensor) -> None:
        """Keep batch rows ``rows``: a smaller fixed shape from here on."""
        assert self.counts is not None
        super().keep(rows)
        self.counts = self.counts.index_select(0, rows)
        self.cache.columns = self.cache.columns.index_select(0, rows)

    def advance(self, picks: list[int]) -> None:
        """Make ``picks`` the next step's inputs, each written into its row's next slot (a finished
        row's pick lands in a masked slot and is never read).
        """
        import torch

        assert self.counts is not None
        device = self.attn.device
        going = torch.tensor([not self.done[r] for r in self.live], device=device)
        self.inputs = torch.tensor(picks, device=self.inputs.device)[:, None]
        self.cache.columns.copy_(self.counts)
        rows = torch.arange(len(self.live), device=device)
        self.attn[rows[going], self.counts[going]] = 1
        self.positions = self.counts[:, None].clone()
        self.counts = self.counts + going.long()


def torch_cat_columns(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a`` and ``b`` side by side (dim 1)."""
    import torch

    return torch.cat([a, b], dim=1)


def _pad_slots(kv: torch.Tensor, width: int) -> torch.Tensor:
    """Keys or values ``[rows, heads, slots, dim]`` left-padded with zeros to ``width`` slots."""
    import torch.nn.functional as F

    return F.pad(kv, (0, 0, width - kv.shape[2], 0))


def _pad_mask(mask: torch.Tensor, width: int) -> torch.Tensor:
    """A ``[rows, slots]`` mask left-padded with zeros (padding) to ``width`` slots."""
    import torch.nn.functional as F

    return F.pad(mask, (width - mask.shape[1], 0))


def _generator(seed: int, prompt: list[int]) -> Any:
    """A generator for one row, seeded by ``seed`` and the row's prompt: a row's samples do not
    depend on which other rows share its batch. It lives on the CPU whatever the model's device,
    so the same seed samples the same tokens on every device (given the same probabilities).
    """
    import torch

    digest = hashlib.sha256(json.dumps([seed, prompt]).encode()).digest()
    return torch.Generator(device="cpu").manual_seed(int.from_bytes(digest[:8], "big") >> 1)


@dataclass(frozen=True, slots=True)
class Draw:
    """How a sampled call draws each token: at ``temperature``, among the ``top_k`` likeliest tokens (0:
    all), then the fewest whose probabilities reach ``top_p`` (1: all), with each row's generator seeded by
    ``seed`` and its prompt. The order (temperature, top-k, top-p) is transformers' own.
    """

    seed: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0

    @classmethod
    def of(cls, constraint: Constraint | None, sampling: Sampling | None, top_p: float, top_k: int) -> Draw | None:
        """How a call of requests with ``constraint`` and ``sampling`` draws (None: greedy). A sampled
        constraint draws at temperature 1 among its valid tokens, unfiltered, as it always did.
        """
        if sampling is not None and sampling.temperature > 0:
            return cls(sampling.seed, sampling.temperature, top_p, top_k)
        if constraint is not None and constraint.sample_seed is not None:
            return cls(constraint.sample_seed)
        return None

    def generators(self, prompts: Sequence[list[int]]) -> list[Any]:
        """One generator per prompt (request row)."""
        return [_generator(self.seed, p) for p in prompts]

    def weights(self, logp: torch.Tensor) -> torch.Tensor:
        """``[rows, vocab]`` weights to draw from, given the rows' log-probs: tempered, cut to the top-k and
        the top-p, unnormalised (``torch.multinomial`` normalises).
        """
        import torch

        w = (logp if self.temperature == 1 else torch.log_softmax(logp / self.temperature, dim=-1)).exp()
        if 0 < self.top_k < w.shape[-1]:
            kth = torch.topk(w, self.top_k, dim=-1).values[:, -1:]
            w = w.masked_fill(w < kth, 0)
        if self.top_p < 1:
            ranked, order = torch.sort(w, dim=-1, descending=True, stable=True)
            before = ranked.cumsum(-1) - ranked  # the mass of the likelier tokens: past top_p, the token goes
            drop = before >= self.top_p * ranked.sum(-1, keepdim=True)
            w = w.masked_fill(torch.zeros_like(drop).scatter(-1, order, drop), 0)
        return w


class Decoder:
    """Greedy or sampled generation on a ``LoadedModel``."""

    def __init__(self, forward: Forward, top_p: float = 1.0, top_k: int = 0) -> None:
        """Decode with ``forward``'s model (loaded on the first request), counting into its usage; sampled
        requests draw within ``top_k`` and ``top_p`` (the backend's options).
        """
        self.forward, self.lm, self.usage = forward, forward.lm, forward.usage
        self.top_p, self.top_k = top_p, top_k

    def generate(self, requests: Sequence[GenerationRequest], budget: Budget) -> list[Generation]:
        """Greedy generation, batched by ``budget``; see ``Backend.generate``. Requests that ask the
        model to think go through :meth:`think` first.
        """
        thinking = [i for i, r in enumerate(requests) if r.thinking is not None and r.thinking.thinks]
        if not thinking:
            return self.answer(requests, budget)
        out: list[Generation | None] = [None] * len(requests)
        rest = [i for i in range(len(requests)) if i not in set(thinking)]
        for idx, answers in ((rest, self.answer([requests[i] for i in rest], budget) if rest else []),
                             (thinking, self.think([requests[i] for i in thinking], budget))):
            for i, g in zip(idx, answers, strict=True):
                out[i] = g
        return [g for g in out if g is not None]

    def think(self, requests: Sequence[GenerationRequest], budget: Budget) -> list[Generation]:
        """Thinking, then the answer: budget forcing (Muennighoff et al. 2025, "s1"), greedy.

        Phase one opens the thinking block (unless the chat template did) and decodes until the
        closing tag, EOS, or the setting's budget. Under ``budget:N`` the block is then closed
        after exactly the tokens spent (at most N) and the model answers from there; under ``on``
        a trace that used its whole cap is ``unfinished``, with no answer. Phase two
        decodes the answer with the request's own ``max_new_tokens``, stop strings and constraint.
        Unlike s1 nothing is appended to make a model think longer ("Wait"), and the answer
        follows the closing tag alone (s1 appends "Final Answer:").
        """
        tokenizer = self.lm.tokenizer
        firsts: list[tuple[list[int], str | None]] = []
        texts: list[str] = []  # the first phase's prompt as text, for the record
        for r in requests:
            assert r.thinking is not None
            ids, rendering = self.lm.encode(r)
            text = self.lm.render(r)
            if not text.rstrip().endswith(r.thinking.tags.open):
                ids = ids + list(tokenizer(r.thinking.tags.open + "\n", add_special_tokens=False)["input_ids"])
                text += r.thinking.tags.open + "\n"
            firsts.append((ids, rendering))
            texts.append(text)
        traces: list[Generation | None] = [None] * len(requests)
        groups: dict[tuple[int, str, Sampling | None], list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            assert r.thinking is not None
            groups[(r.thinking.budget, r.thinking.tags.close, r.sampling)].append(i)
        for (cap, close, sampling), idx in groups.items():
            for i, g in zip(idx, self.decode_group([firsts[i][0] for i in idx], cap, (close,), None, budget,
                                                   sampling), strict=True):
                traces[i] = g
        out: list[Generation | None] = [None] * len(requests)
        seconds: dict[tuple[Any, ...], list[tuple[int, list[int]]]] = defaultdict(list)
        for i, (r, trace) in enumerate(zip(requests, traces, strict=True)):
            assert r.thinking is not None and trace is not None
            cut = trace.n_tokens >= r.thinking.budget
            spent = trace.n_tokens if cut else len(tokenizer(trace.text, add_special_tokens=False)["input_ids"])
            base = Generation(text="", n_tokens=trace.n_tokens, prompt_tokens=len(firsts[i][0]),
                              reasoning=trace.text.strip(), reasoning_tokens=spent, rendering=firsts[i][1],
                              rendered_prompt=texts[i])
            if cut and r.thinking.mode != "budget":
                out[i] = replace(base, unfinished=True)
                continue
            closing = ("\n" if cut else "") + r.thinking.tags.close + "\n\n"
            ids = firsts[i][0] + list(tokenizer(trace.text + closing, add_special_tokens=False)["input_ids"])
            seconds[(r.max_new_tokens, r.stop, r.constraint, r.sampling)].append((i, ids))
            out[i] = replace(base, rendered_prompt=texts[i] + trace.text + closing)
        for (max_new, stop, constraint, sampling), rows in seconds.items():
            answers = self.decode_group([ids for _, ids in rows], max_new, stop, constraint, budget, sampling)
            for (i, _), g in zip(rows, answers, strict=True):
                first = out[i]
                assert first is not None
                out[i] = replace(first, text=g.text, n_tokens=first.n_tokens + g.n_tokens, logprobs=g.logprobs)
        return [g for g in out if g is not None]

    def answer(self, requests: Sequence[GenerationRequest], budget: Budget) -> list[Generation]:
        """Generation of the answers themselves (no thinking phase), batched by ``budget``."""
        out: list[Generation | None] = [None] * len(requests)
        groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.max_new_tokens, r.stop, r.constraint, r.sampling)].append(i)
        encoded, renderings = self.encode(requests)
        for (max_new, stop, constraint, sampling), idx in groups.items():
            answers = self.decode_group([encoded[i] for i in idx], max_new, stop, constraint, budget, sampling)
            for i, g in zip(idx, answers, strict=True):
                # A thinking setting's record (here `off`) shows the prompt its template rendered.
                shown = self.lm.render(requests[i]) if requests[i].thinking is not None else None
                out[i] = replace(g, rendering=renderings[i], rendered_prompt=shown)
        return [g for g in out if g is not None]

    def decode_group(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...], constraint: Constraint | None,
                     budget: Budget, sampling: Sampling | None = None) -> list[Generation]:
        """The answers to prompts that share ``max_new``, ``stop``, ``constraint`` and ``sampling``, in order.

        A fixed batch that runs out of device memory is split and its halves retried; a pool
        restarts with batches half as large (its rows cannot be split once merged).
        """
        from lingdiag.models.hf.memory import shrink_on_oom, split_on_oom

        if budget.static and self.lm.window:
            raise BackendError(f"kv_cache=static: {self.lm.path!r} has sliding-window attention "
                               f"({self.lm.window} tokens), which the slot cache does not keep; use kv_cache=dynamic")
        lengths = [len(p) + max_new for p in prompts]
        if budget.static:
            self._check_slots(max(len(p) for p in prompts), max_new)
        shared = self.shared_prompt(prompts, max_new) if budget.prefix_reuse else None
        device = self.lm.input_device
        draw = Draw.of(constraint, sampling, self.top_p, self.top_k)
        if budget.continuous and constraint is None and not self.lm.window:
            if budget.static:
                return shrink_on_oom(lambda tokens: self.decode_slots(prompts, max_new, stop, shared,
                                                                      replace(budget, tokens=tokens), draw=draw),
                                     budget.tokens, min(lengths), device)
            return shrink_on_oom(lambda tokens: self.decode_pool(prompts, max_new, stop, shared,
                                                                 replace(budget, tokens=tokens), draw),
                                 budget.tokens, min(lengths), device)
        answers: list[Generation | None] = [None] * len(prompts)

        def run(batch: Sequence[int]) -> None:
            mine = [prompts[b] for b in batch]
            for b, g in zip(batch, self.decode_slots(mine, max_new, stop, shared, budget, constraint, draw)
                            if budget.static else self.decode_batch(mine, max_new, stop, constraint, shared, draw),
                            strict=True):
                answers[b] = g

        for batch in token_budget_batches(lengths, budget.tokens, budget.max_batch):
            split_on_oom(run, batch, device)
        return [g for g in answers if g is not None]

    def _check_slots(self, longest: int, max_new: int) -> None:
        """Refuse static slots past the model's context: each row is allocated its longest prompt plus
        ``max_new`` slots before the first step (``max_new_tokens=1000000`` on SmolLM2 would ask for
        ~46 GB), where the dynamic cache grows only as far as the answers go.

        Raises:
            BackendError: one line saying how many slots a row needs, the context, and what to change.
        """
        context = self.lm.context_length
        if context is None or longest + max_new <= context:
            return
        fits = (f"lower max_new_tokens to at most {context - longest}" if longest < context else
                f"the prompt alone is {longest} tokens")
        raise BackendError(f"kv_cache=static: a row needs {longest + max_new:,} slots (a prompt of {longest} tokens "
                           f"+ max_new_tokens {max_new:,}), allocated before decoding, past the model's context of "
                           f"{context:,} tokens; {fits}, or use kv_cache=dynamic (grown as the answers go)")

    def encode(self, requests: Sequence[GenerationRequest]) -> tuple[list[list[int]], list[str | None]]:
        """Each request's prompt tokens and rendering; renderings other than the template are counted."""
        pairs = [self.lm.encode(r) for r in requests]
        for _, rendering in pairs:
            if rendering is not None:
                self.usage[f"rendered_{rendering.replace('-', '_')}"] += 1
        return [ids for ids, _ in pairs], [rendering for _, rendering in pairs]

    def shared_prompt(self, prompts: list[list[int]], max_new: int) -> SharedPrompt | None:
        """The prompts' common prefix and its one-row cache, when worth reusing.

        Args:
            prompts: Prompt tokens of one group of requests.
            max_new: Their ``max_new_tokens``.

        Returns:
            None when fewer than two prompts share ``MIN_SHARED_PROMPT`` tokens, or when the
            padded rows could reach the model's sliding window.
        """
        if len(prompts) < 2:
            return None
        # Every row keeps at least one token of its own to start generating from.
        n = min(common_prefix_all(prompts), min(len(p) for p in prompts) - 1)
        window = self.lm.window
        if n < MIN_SHARED_PROMPT or (window and 2 * max(len(p) for p in prompts) + max_new > window):
            return None
        prefix = prompts[0][:n]
        rows, _ = self.forward.extend(None, [0], [prefix])
        assert rows is not None
        return prefix, rows

    def decode_pool(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...],
                    shared: SharedPrompt | None, budget: Budget, draw: Draw | None = None) -> list[Generation]:
        """Decoding with continuous batching (greedy, or as ``draw`` says): finished rows leave, waiting rows join.

        Requests join longest first while ``rows × longest (prompt + max_new) ≤ budget.tokens``
        (the rule of ``token_budget_batches``, so the first batch is the same). Once an eighth
        of the live rows are done they are dropped, the slots nobody needs are trimmed, and
        the freed room is refilled: the joining rows' prompts run as one prefill batch whose
        first tokens are picked, then merge into the pool. Admission order is fixed by the
        prompts alone, so the same call decodes the same way every time.
        """
        import torch

        eos_ids = self.lm.eos_ids
        length = [len(p) + max_new for p in prompts]
        waiting = deque(sorted(range(len(prompts)), key=lambda i: -length[i]))
        done, tokens = [False] * len(prompts), [[] for _ in prompts]  # type: list[bool], list[list[int]]
        logprobs: list[list[float]] = [[] for _ in prompts]
        generators = draw.generators(prompts) if draw else []  # by request row: every batch of the pool reads them
        batch: _Batch | None = None
        picks: list[int] = []
        with torch.inference_mode():
            while True:
                if batch is not None:
                    n_done = sum(done[r] for r in batch.live)
                    if n_done == len(batch.live):
                        batch, picks = None, []
                    elif n_done >= max(1, len(batch.live) // 8):
                        picks = batch.evict(picks)
                        batch.trim()
                live = batch.live if batch is not None else []
                joining: list[int] = []
                longest = max((length[r] for r in live), default=0)
                while waiting and len(live) + len(joining) < budget.max_batch and \
                        (len(live) + len(joining) + 1) * max(longest, length[waiting[0]]) <= budget.tokens:
                    longest = max(longest, length[waiting[0]])
                    joining.append(waiting.popleft())
                if not joining and batch is None and waiting:  # one row over the budget runs alone
                    joining.append(waiting.popleft())
                if joining:
                    new = self._start([prompts[r] for r in joining], joining, shared, done, tokens, logprobs)
                    new.generators, new.draw = generators, draw
                    new_picks = self._step(new, [], eos_ids, stop, max_new)
                    if batch is None:
                        batch, picks = new, new_picks
                    else:
                        picks = batch.merge(new, picks, new_picks)
                        self.usage["refilled_rows"] += len(joining)
                    continue
                if batch is None:
                    break
                batch.advance(picks)
                self.usage.update(forward_tokens=sum(not done[r] for r in batch.live), padded_tokens=len(batch.live))
                picks = self._step(batch, [], eos_ids, stop, max_new)
        return [self._result(prompt, tokens[r], logprobs[r], eos_ids, stop) for r, prompt in enumerate(prompts)]

    def decode_slots(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...], shared: SharedPrompt | None,
                     budget: Budget, constraint: Constraint | None = None,
                     draw: Draw | None = None) -> list[Generation]:
        """Decoding in fixed rows and slots (``kv.SlotCache``, ``kv_cache=static``): the same answers as
        ``decode_pool`` (without a constraint) or ``decode_batch`` (with one), with fixed shapes.

        Each row has room for the longest prompt plus ``max_new``. Without a constraint the rows are as
        many as fit ``budget`` and a finished row's place goes to the next waiting request (longest
        first, once an eighth of the rows are free, as in ``decode_pool``); once none waits and half
        the rows are finished, they are dropped (so the shapes change at most log2(rows) times). With
        one, every prompt has a row from the start and keeps it (its grammar state is per row), as in
        ``decode_batch``.
        """
        import torch

        if not prompts:
            return []
        eos_ids = self.lm.eos_ids
        refill = constraint is None and budget.continuous
        length = [len(p) + max_new for p in prompts]
        waiting = deque(sorted(range(len(prompts)), key=lambda i: -length[i]))
        slots = length[waiting[0]]
        rows = max(1, min(budget.max_batch, budget.tokens // slots, len(prompts))) if refill else len(prompts)
        done, tokens = [False] * len(prompts), [[] for _ in prompts]  # type: list[bool], list[list[int]]
        logprobs: list[list[float]] = [[] for _ in prompts]
        processors = self._constraint_processors(constraint, rows)
        with torch.inference_mode():
            first_rows = [waiting.popleft() for _ in range(rows)]
            first = self._start([prompts[r] for r in first_rows], first_rows, shared, done, tokens, logprobs)
            if draw is not None:  # by request row, for the rows that join later too
                first.generators, first.draw = draw.generators(prompts), draw
            picks = self._step(first, processors, eos_ids, stop, max_new)
            batch = _SlotBatch.of(first, slots)
            picks = batch.place(list(range(rows)), first, [], picks)
            del first
            while True:
                free = [b for b, r in enumerate(batch.live) if done[r]]
                if len(free) == rows and not waiting:
                    break
                if refill and waiting and len(free) >= max(1, rows // 8):
                    joining = [waiting.popleft() for _ in free[:len(waiting)]]
                    new = self._start([prompts[r] for r in joining], joining, shared, done, tokens, logprobs)
                    new.generators, new.draw = batch.generators, batch.draw
                    picks = batch.place(free[:len(joining)], new, picks, self._step(new, [], eos_ids, stop, max_new))
                    self.usage["refilled_rows"] += len(joining)
                    continue
                if refill and not waiting and len(free) >= max(1, rows // 2):
                    # The queue is empty: halve the shape rather than run finished rows to the end.
                    picks = batch.evict(picks)
                    rows = len(batch.live)
                    continue
                batch.advance(picks)
                self.usage.update(forward_tokens=sum(not done[r] for r in batch.live), padded_tokens=rows)
                picks = self._step(batch, processors, eos_ids, stop, max_new)
        return [self._result(prompt, tokens[r], logprobs[r], eos_ids, stop) for r, prompt in enumerate(prompts)]

    def decode_batch(self, prompts: list[list[int]], max_new: int, stop: tuple[str, ...],
                     constraint: Constraint | None, shared: SharedPrompt | None,
                     draw: Draw | None = None) -> list[Generation]:
        """Decoding of one batch (greedy, or as ``draw`` says), dropping finished rows as it goes.

        transformers' ``generate`` keeps a finished row in the batch until the longest one
        ends; answers of diagnostic prompts range from one word to hundreds of tokens, so
        that can multiply the decoding work several times. Here, once an eighth of the
        live rows are done, the batch is compacted (their cache rows dropped). With a
        constraint the rows stay (the grammar processor keeps per-row state by position)
        and finished rows receive padding, as in ``generate``.
        """
        import torch

        eos_ids = self.lm.eos_ids
        n = len(prompts)
        batch = self._start(prompts, list(range(n)), shared, [False] * n, [[] for _ in prompts],
                            [[] for _ in prompts])
        processors = self._constraint_processors(constraint, len(prompts))
        if draw is not None:
            batch.generators, batch.draw = draw.generators(prompts), draw
        # A sliding-window cache rebuilt from its rows would forget how many tokens it has seen.
        window = self.lm.window
        evict = not processors and not (window and batch.attn.shape[1] + max_new > window)
        with torch.inference_mode():
            for step in range(max_new):
                picks = self._step(batch, processors, eos_ids, stop, max_new)
                n_done = sum(batch.done[r] for r in batch.live)
                if n_done == len(batch.live) or step == max_new - 1:
                    break
                if evict and n_done >= max(1, len(batch.live) // 8):
                    picks = batch.evict(picks)
                batch.advance(picks)
                self.usage.update(forward_tokens=sum(not batch.done[r] for r in batch.live),
                                  padded_tokens=len(batch.live))
        return [self._result(prompt, batch.tokens[r], batch.logprobs[r], eos_ids, stop)
                for r, prompt in enumerate(prompts)]

    def _start(self, prompts: list[list[int]], rows: list[int], shared: SharedPrompt | None, done: list[bool],
               tokens: list[list[int]], logprobs: list[list[float]]) -> _Batch:
        """The first step's inputs: whole prompts, or their tails after the shared prefix.

        ``rows`` are the prompts' indices into ``done``, ``tokens`` and ``logprobs``, the call's
        answers so far, which the batch fills in.
        """
        import torch
        from transformers import DynamicCache

        from lingdiag.models.hf.kv import PrefixedCache

        pad = self.lm.tokenizer.pad_token_id
        if shared is None:
            skip, width = 0, max(len(p) for p in prompts)
            ids = [[pad] * (width - len(p)) + p for p in prompts]
            mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
            cache = DynamicCache(config=self.lm.model.config)
        else:
            # [shared prefix][padding][own tokens]: the prefix slots come from the cache;
            # positions follow the mask, so padding does not shift them.
            prefix, prefix_rows = shared
            skip = len(prefix)
            tails = [p[skip:] for p in prompts]
            tail_width = max(len(t) for t in tails)
            ids = [[pad] * (tail_width - len(t)) + t for t in tails]
            mask = [[1] * skip + [0] * (tail_width - len(t)) + [1] * len(t) for t in tails]
            cache = PrefixedCache(prefix_rows.cache)
        device = self.lm.input_device
        attn = torch.tensor(mask, device=device)
        inputs = torch.tensor(ids, device=device)
        positions = (attn.cumsum(1) - 1).clamp(min=0)[:, skip:]
        self.usage.update(forward_tokens=sum(len(p) - skip for p in prompts), padded_tokens=inputs.numel())
        return _Batch(inputs=inputs, attn=attn, positions=positions, cache=cache, live=list(rows),
                      done=done, tokens=tokens, logprobs=logprobs, skip=skip)

    def _step(self, batch: _Batch, processors: list[Any], eos_ids: set[int], stop: tuple[str, ...],
              max_new: int) -> list[int]:
        """One forward pass: each live row's pick (the best token, or drawn as ``batch.draw`` says; padding
        for finished rows), recorded with its log-prob under the model's (constrained) distribution; a row
        is done at EOS, a stop string or ``max_new`` tokens.
        """
        import torch

        out = self.lm.model(input_ids=batch.inputs, attention_mask=batch.attn, position_ids=batch.positions,
                            cache=batch.cache, use_cache=True, logits_to_keep=1)
        batch.cache, scores = out.cache, out.logits[:, -1, :].float()
        self.usage["head_positions"] += len(batch.live)
        for proc in processors:
            scores = proc(batch.inputs[:, -1:], scores)
        if batch.draw is not None:
            logp = torch.log_softmax(scores, dim=-1)
            weights = batch.draw.weights(logp).cpu()
            # Drawn on the CPU (the generators' device): one vocabulary row per live row.
            chosen = torch.stack([torch.multinomial(weights[b], 1, generator=batch.generators[r])
                                  for b, r in enumerate(batch.live)]).squeeze(1)
            lps = logp.gather(1, chosen.to(logp.device)[:, None]).squeeze(1).tolist()
            picks: list[int] = chosen.tolist()
        else:
            best = scores.max(dim=-1)
            lps = (best.values - torch.logsumexp(scores, dim=-1)).tolist()
            picks = best.indices.tolist()
        window = stop_window(stop)
        was_done = sum(batch.done[r] for r in batch.live)
        for b, r in enumerate(batch.live):
            if batch.done[r]:
                picks[b] = self.lm.tokenizer.pad_token_id
                continue
            tokens = batch.tokens[r]
            tokens.append(picks[b])
            batch.logprobs[r].append(round(lps[b], 6))
            tail = self.lm.tokenizer.decode(tokens[-window:], skip_special_tokens=True) if stop else ""
            batch.done[r] = picks[b] in eos_ids or len(tokens) >= max_new or any(x in tail for x in stop)
        now_done = sum(batch.done[r] for r in batch.live)
        tick(requests=now_done - was_done, tokens=len(batch.live) - was_done)
        return picks

    def _result(self, prompt: list[int], row: list[int], logprobs: list[float], eos_ids: set[int],
                stop: tuple[str, ...]) -> Generation:
        """The answer of one row: text without the final EOS, cut at the first stop string."""
        content = row[:-1] if row and row[-1] in eos_ids else row
        text = cut_at_stop(self.lm.tokenizer.decode(content, skip_special_tokens=True), stop)
        return Generation(text=text, n_tokens=len(row), prompt_tokens=len(prompt), logprobs=tuple(logprobs))

    def _constraint_processors(self, constraint: Constraint | None, batch: int) -> list[Any]:
        """The logits processor enforcing ``constraint`` on ``batch`` rows (none without one)."""
        if constraint is None:
            return []
        from lingdiag.models.hf.constraints import logits_processor

        return [logits_processor(constraint, self.lm.tokenizer, batch,
                                 vocab_size=int(self.lm.model.get_output_embeddings().weight.shape[0]),
                                 stop_ids=sorted(self.lm.eos_ids))]
