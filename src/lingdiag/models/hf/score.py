"""Log-likelihood scoring: a shared-prefix tree with the LM head at scored positions only.

Log-likelihood requests run as a three-level tree (call-wide prefix, groups sharing more,
per-request tails; see ``lingdiag.models.hf.batching``) and apply the LM head only at the
positions that are scored, a chunk at a time. The plain path runs every request in full
with logits at every position; both give the same argmax, and log-probs equal within 1e-4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lingdiag.errors import BackendError
from lingdiag.models.hf import workplan
from lingdiag.models.hf.batching import (
    Budget,
    Group,
    common_prefix_all,
    fill_packs,
    length_chunks,
    pack_groups,
    plan_groups,
)
from lingdiag.models.hf.forward import Forward, Packed, full_logits
from lingdiag.models.hf.load import LoadedModel, on_device, staged
from lingdiag.models.hf.placement import offloaded
from lingdiag.models.hf.tokens import Split, TokenScorer, split_requests
from lingdiag.models.hf.workplan import Shape
from lingdiag.models.progress import tick
from lingdiag.records import LogLikelihood, LoglikelihoodRequest

if TYPE_CHECKING:
    import torch

    from lingdiag.models.hf.linear import PackedLinear

Contribution = tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]
"""Requests, their log-probs (float64) and non-greedy counts from one head chunk, added to the
totals once the batch that computed them has finished (so a batch retried after running out of
memory adds nothing twice, and additions keep their order)."""

Span = tuple[int, int, int, int, int]
"""``(row, column of start, start, end, request)``: a row of a tree level holds the
request's positions ``[start, end)`` from that column on."""


@dataclass(frozen=True, slots=True)
class Scored:
    """The scoring view of one log-likelihood request."""

    seq: list[int]
    """Model input: context and continuation tokens without the last one."""
    targets: list[int]
    """``targets[t]`` is the token predicted at position ``t`` (the input shifted by one)."""
    first: int
    """First scored position: the continuation starts at ``first + 1``."""


def scoring_view(split: Sequence[Split]) -> list[Scored]:
    """The scoring view of tokenized requests (what ``workplan`` plans and ``Scorer`` runs)."""
    return [Scored(seq=(s.ctx + s.cont)[:-1], targets=(s.ctx + s.cont)[1:], first=s.first) for s in split]


class LMHead:
    """The model's LM head, applied outside its forward pass to selected hidden states."""

    def __init__(self, lm: LoadedModel) -> None:
        """Compute ``lm``'s logits; the output buffer (and a packed weight) is made on first use."""
        self.lm = lm
        self.chunk = lm.placement.head_chunk
        self._buffer: torch.Tensor | None = None
        self._packed: PackedLinear | None = None
        self._pack = lm.placement.packed_linears
        """Whether to pack the head on the next call: off once ``packed_head`` declined (the head's
        dtype and the torch build do not change), so a head that cannot be packed is not re-asked
        for every chunk."""

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits from up to ``Placement.head_chunk`` final hidden states, as the model's LM head computes them.

        The result is a view of a buffer reused by the next call (callers may modify it;
        ``release`` frees it): a fresh logits tensor (50 MB at 256 × 49k) comes
        from newly mapped pages every time, and faulting them in made the LM head run at
        ~110 GFLOP/s instead of ~150 on 2 cores.
        """
        head = self.lm.model.get_output_embeddings()
        # The last layer's device under device_map="auto"; a no-op on one device.
        hidden = hidden.to(self.lm.output_device)
        # An offloaded head's weight waits on `meta`: only a call of the module brings it in.
        logits = head(hidden) if offloaded(head) else self._product(head, hidden)
        logits = logits.float()
        softcap = self.lm.softcap
        if softcap:
            logits.div_(softcap).tanh_().mul_(softcap)
        return logits

    def _product(self, head: torch.nn.Linear, hidden: torch.Tensor) -> torch.Tensor:
        """``head(hidden)`` into the reused buffer, or on the packed weight where it packs."""
        import torch

        if self._packed is None and self._pack:
            from lingdiag.models.hf.linear import packed_head

            self._packed = packed_head(head)
            self._pack = self._packed is not None
        if self._packed is not None:
            # oneDNN on the packed weight: ~2× MKL's rate at 64 rows (bench/README.md, levers).
            packed: torch.Tensor = self._packed(hidden)
            return packed
        n, vocab = hidden.shape[0], head.weight.shape[0]
        if self._buffer is None or self._buffer.shape[0] < n:
            self._buffer = torch.empty(max(n, self.chunk), vocab, dtype=head.weight.dtype, device=head.weight.device)
        logits = self._buffer[:n]
        if head.bias is None:
            torch.mm(hidden, head.weight.t(), out=logits)
        else:
            torch.addmm(head.bias, hidden, head.weight.t(), out=logits)
        return logits

    def release(self) -> None:
        """Free the logits buffer and the packed weight (the next call makes new ones)."""
        self._buffer = self._packed = None

    def matches_model(self) -> bool:
        """Whether this head reproduces the model's own logits on a short probe.

        Scoring only selected positions needs the LM head outside the model's forward; an
        architecture that transforms logits in ways ``LMHead`` does not know takes the plain path.
        """
        import torch

        probe = self.lm.tokenizer("The cat sat", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([[self.lm.prefix_id, *probe]], device=self.lm.input_device)
        with torch.inference_mode():
            full = self.lm.model(input_ids=ids).logits[0].float()
            mine = self(self.lm.model.base_model(input_ids=ids).last_hidden_state[0])
        return bool(torch.allclose(full, mine, atol=1e-4, rtol=1e-4))


class Scorer:
    """Log-likelihood scoring on a ``LoadedModel``."""

    def __init__(self, forward: Forward) -> None:
        """Score with ``forward``'s model (loaded on the first request), counting into its usage."""
        self.forward, self.lm, self.usage, self.placement = forward, forward.lm, forward.usage, forward.placement
        self._head_matches: bool | None = None  # checked once per model
        self._tokens = TokenScorer(self.lm, self.usage)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], budget: Budget) -> list[LogLikelihood]:
        """Summed continuation log-probs, batched by ``budget``; see ``Backend.loglikelihood``.

        Each request is tokenized under its scoring policy (``tokens.split_requests``); per-token
        requests are run in full by ``TokenScorer``, the others share prefixes (``tree``).
        """
        split = split_requests(self.lm, requests)
        for r, s in zip(requests, split, strict=True):
            if not s.cont:
                raise BackendError(f"log-likelihood request with an empty continuation: {r!r}")
        out: list[LogLikelihood | None] = [None] * len(requests)
        context = self.lm.context_length
        for i, (r, s) in enumerate(zip(requests, split, strict=True)):
            if context is not None and len(s.ctx) + len(s.cont) > context:
                # Past its positions a model scores garbage, silently: the item is failed, counted, shown.
                out[i] = LogLikelihood(0.0, 0, False, error=f"text of {len(s.ctx) + len(s.cont)} tokens is longer "
                                       f"than the model's context of {context} tokens")
            elif s.scored == 0 and not r.policy.whitespace_correction:  # one token, nothing before it: none scored
                none: tuple[()] | None = () if r.per_token else None
                out[i] = LogLikelihood(logprob=0.0, n_tokens=0, is_greedy=True, token_logprobs=none, token_spans=none)
        per_token = [i for i, r in enumerate(requests) if r.per_token and out[i] is None]
        if per_token:
            answers = self._tokens.loglikelihood([requests[i] for i in per_token], [split[i] for i in per_token],
                                                 budget)
            for i, a in zip(per_token, answers, strict=True):
                out[i] = a
        rest = [i for i in range(len(requests)) if out[i] is None]
        for i, a in zip(rest, self._sums([split[i] for i in rest], budget), strict=True):
            out[i] = a
        return [r for r in out if r is not None]

    def _sums(self, split: list[Split], budget: Budget) -> list[LogLikelihood]:
        """Summed log-probs of requests with at least one scored token: the shared-prefix tree, else plain."""
        if not split:
            return []
        scored = scoring_view(split)
        window = self.lm.window
        longest = max(len(s.seq) for s in scored)
        head = LMHead(self.lm)
        try:
            # A packed pass's 4D mask replaces the model's own, a sliding window included: only where
            # no window can cut a sequence (as for the tree, whose rows start at other positions).
            fits = not (window and 2 * longest > window)
            if fits and (budget.prefix_reuse or budget.packed) and self._check_head(head):
                run = self.choose(scored, budget).budget if budget.packed else budget
                if run.packed or run.prefix_reuse:  # else the work model chose the plain path
                    totals, wrong = (self.packed(scored, run, head) if run.packed else self.tree(scored, run, head))
                    # One copy off the device (float64 to Python floats is exact).
                    sums, misses = totals.tolist(), wrong.tolist()
                    return [LogLikelihood(logprob=sums[i], n_tokens=s.scored, is_greedy=misses[i] == 0)
                            for i, s in enumerate(split)]
        finally:
            head.release()  # 268 MB for Gemma-3's vocabulary: not kept between calls
        return self.plain(split, budget)

    def choose(self, scored: list[Scored], budget: Budget) -> workplan.Plan:
        """The plan of least work (``workplan.choose``): packed at the tokens per pass it chooses, or, with
        ``budget.choose_padded``, padded where that does less; the choice and its work counted in ``usage``.
        """
        shape = Shape.of(self.lm.model.config)
        placement = self.placement
        plan = workplan.choose(shape, scored, budget, padded=budget.choose_padded,
                               attention=placement.packed_attention,
                               pass_tokens=placement.call_tokens or workplan.WEIGHT_READ_TOKENS)
        self.usage[f"plan_{plan.kind}"] += 1
        self.usage.update(planned_flops=plan.flops(shape), useful_flops=workplan.useful_flops(shape, scored))
        return plan

    def _check_head(self, head: LMHead) -> bool:
        if self._head_matches is None:
            self._head_matches = head.matches_model()
        return self._head_matches

    def plain(self, split: list[Split], budget: Budget) -> list[LogLikelihood]:
        """Every request in full, logits at every position (the reference path).

        Args:
            split: Context and continuation tokens per request (``split_request``).
            budget: Padded tokens and rows per batch.
        """
        import torch

        seqs = [(s.ctx + s.cont)[:-1] for s in split]
        out: list[LogLikelihood | None] = [None] * len(split)
        placement = self.placement
        tokens = placement.tokens("plain", lambda: self.lm.model) if placement.sized_from_memory else budget.tokens

        def use(batch: list[int], logits: torch.Tensor) -> None:
            for row, i in enumerate(batch):
                s = split[i]
                # In float64: a float32 log-softmax over the vocabulary is off by ~1e-5 per token.
                lp = torch.log_softmax(logits[row, s.first:len(seqs[i])].double(), dim=-1)
                target = torch.tensor((s.ctx + s.cont)[s.first + 1:], device=lp.device)
                picked = lp.gather(1, target[:, None]).squeeze(1)
                out[i] = LogLikelihood(logprob=float(picked.sum()), n_tokens=s.scored,
                                       is_greedy=bool((lp.argmax(-1) == target).all()))

        full_logits(self.lm, self.usage, seqs, tokens, budget.max_batch, use)
        return [r for r in out if r is not None]

    def tree(self, scored: list[Scored], budget: Budget, head: LMHead) -> tuple[torch.Tensor, torch.Tensor]:
        """Summed log-probs and count of non-greedy tokens per request, sharing prefixes.

        Args:
            scored: The requests.
            budget: Padded tokens and rows per batch of groups.
            head: The LM head applied at scored positions.

        Returns:
            ``totals`` (float64) and ``wrong`` (count of targets that are not the argmax), per request.
        """
        import torch

        from lingdiag.models.hf.memory import split_on_oom

        seqs = [s.seq for s in scored]
        # On the logits' device: the head's output is added into them chunk by chunk.
        device = self.lm.output_device
        totals = torch.zeros(len(scored), dtype=torch.float64, device=device)
        wrong = torch.zeros(len(scored), dtype=torch.long, device=device)
        root = common_prefix_all(seqs)
        root_rows = None

        def run_root(_: Sequence[int]) -> None:
            nonlocal root_rows
            root_rows, hidden = self.forward.extend(None, [0], [seqs[0][:root]])
            add(totals, wrong, self.score(hidden, [(0, 0, 0, root, i) for i in range(len(scored))], scored, head))

        if root:  # one row: out of memory, it is a one-line error
            split_on_oom(run_root, [0], device)

        def run(batch: Sequence[Group]) -> None:
            contributions: list[Contribution] = []
            # Level 1: one row per group, its shared segment (the whole tail of a lone request).
            grouped = [g for g in batch if g.end > root]
            if not grouped:
                return
            level1, hidden = self.forward.extend(root_rows, [0] * len(grouped),
                                                 [seqs[g.members[0]][root:g.end] for g in grouped])
            width = hidden.shape[1]
            spans = [(row, width - (g.end - root), root, g.end, i)
                     for row, g in enumerate(grouped) for i in g.members]
            contributions += self.score(hidden, spans, scored, head)
            # Level 2: one row per member with tokens beyond its group's segment, in passes of
            # similar length (``length_chunks``).
            tails = [(row, g.end, i) for row, g in enumerate(grouped) for i in g.members if len(seqs[i]) > g.end]
            for chunk in length_chunks([len(seqs[i]) - end for _, end, i in tails], budget.call_tokens):
                part = [tails[k] for k in chunk]
                _, hidden = self.forward.extend(level1, [row for row, _, _ in part],
                                                [seqs[i][end:] for _, end, i in part], keep=False)
                width = hidden.shape[1]
                spans = [(row, width - (len(seqs[i]) - end), end, len(seqs[i]), i)
                         for row, (_, end, i) in enumerate(part)]
                contributions += self.score(hidden, spans, scored, head)
            add(totals, wrong, contributions)
            tick(requests=sum(len(g.members) for g in grouped))

        for batch in pack_groups(plan_groups(seqs, root, budget.max_batch), seqs, root, budget):
            split_on_oom(run, batch, device)
        return totals, wrong

    def packed(self, scored: list[Scored], budget: Budget, head: LMHead) -> tuple[torch.Tensor, torch.Tensor]:
        """``tree``'s sums with each level packed into one row (``Forward.pack``): no padding, passes of
        about ``budget.packed`` tokens. Without ``prefix_reuse`` each request is a segment of its own.
        """
        import torch

        from lingdiag.models.hf.memory import split_on_oom

        seqs = [s.seq for s in scored]
        device = self.lm.output_device
        totals = torch.zeros(len(scored), dtype=torch.float64, device=device)
        wrong = torch.zeros(len(scored), dtype=torch.long, device=device)
        share = budget.prefix_reuse
        root = common_prefix_all(seqs) if share else 0
        groups = (plan_groups(seqs, root, budget.max_batch) if share
                  else [Group(end=len(s), members=(i,)) for i, s in enumerate(seqs)])
        base: Packed | None = None

        def run_root(_: Sequence[int]) -> None:
            nonlocal base
            base, hidden, _ = self.forward.pack(None, [], [seqs[0][:root]])
            add(totals, wrong, self.score(hidden, [(0, 0, 0, root, i) for i in range(len(scored))], scored, head))

        if root:
            split_on_oom(run_root, [0], device)

        def run(batch: Sequence[Group]) -> None:
            grouped = [g for g in batch if g.end > root]
            if not grouped:
                return
            level1, hidden, offsets = self.forward.pack(base, [0] * len(grouped),
                                                        [seqs[g.members[0]][root:g.end] for g in grouped])
            contributions = self.score(hidden, [(0, offsets[k], root, g.end, i)
                                                for k, g in enumerate(grouped) for i in g.members], scored, head)
            old = 0 if base is None else len(base.end)
            tails = [(old + k, g.end, i) for k, g in enumerate(grouped) for i in g.members if len(seqs[i]) > g.end]
            if tails:
                _, hidden, offsets = self.forward.pack(level1, [p for p, _, _ in tails],
                                                       [seqs[i][end:] for _, end, i in tails])
                contributions += self.score(hidden, [(0, offsets[k], end, len(seqs[i]), i)
                                                     for k, (_, end, i) in enumerate(tails)], scored, head)
            add(totals, wrong, contributions)

        for batch in fill_packs(groups, seqs, root, budget.packed or budget.tokens):
            split_on_oom(run, batch, device)
        return totals, wrong

    def score(self, hidden: torch.Tensor, spans: list[Span], scored: list[Scored],
              head: LMHead) -> list[Contribution]:
        """The log-probs that one level's hidden states decide, a head chunk at a time.

        Args:
            hidden: ``[rows, width, hidden]`` from ``Forward.extend``.
            spans: Where each request's positions are in ``hidden`` (see ``Span``).
            scored: The requests.
            head: The LM head.

        Returns:
            One ``Contribution`` per head chunk, for ``add``.
        """
        import torch

        unique: dict[tuple[int, int], int] = {}
        pairs: list[tuple[int, int, int]] = []  # (head position, target, request)
        for row, col, start, end, i in spans:
            s = scored[i]
            for t in range(max(start, s.first), end):
                pairs.append((unique.setdefault((row, col + t - start), len(unique)), s.targets[t], i))
        if not unique:
            return []
        keys = list(unique)
        self.usage["head_positions"] += len(keys)
        chunk = head.chunk
        # Each head chunk's pairs, chosen here on the host (in pair order, as a mask's nonzero would give
        # them): choosing them on the device reads a data-dependent size back, a wait for every chunk.
        chunks: list[list[tuple[int, int, int]]] = [[] for _ in range(0, len(keys), chunk)]
        for pos, target, i in pairs:
            chunks[pos // chunk].append((pos % chunk, target, i))
        ordered = [p for c in chunks for p in c]
        # Every index of this level in one staged copy: rows and columns of the picked states, then
        # per pair its position in its chunk, its target and its request.
        index = staged([r for r, _ in keys] + [c for _, c in keys] + [x for p in ordered for x in p], hidden.device)
        n = len(keys)
        picked = hidden[index[:n], index[n:2 * n]]
        per_pair = on_device(index[2 * n:].view(-1, 3), self.lm.output_device)
        out: list[Contribution] = []
        done = 0
        with torch.inference_mode():
            for k, lo in enumerate(range(0, n, chunk)):
                logits = head(picked[lo:lo + chunk])
                sel = per_pair[done:done + len(chunks[k])]
                done += len(chunks[k])
                local, tgt = sel[:, 0], sel[:, 1]
                # One pass for max and argmax, then exp in place: the logits buffer is the
                # largest tensor here, and logsumexp plus argmax would read it and allocate
                # its size several times.
                best, argmax = logits.max(dim=-1)
                target_logit = logits[local, tgt]
                lse = best + logits.sub_(best[:, None]).exp_().sum(dim=-1).log_()
                out.append((sel[:, 2], (target_logit - lse[local]).double(), (argmax[local] != tgt).long()))
        return out


def add(totals: torch.Tensor, wrong: torch.Tensor, contributions: Sequence[Contribution]) -> None:
    """Add ``contributions`` to the per-request ``totals`` and ``wrong``, in order."""
    for request, logprobs, misses in contributions:
        totals.index_add_(0, request, logprobs)
        wrong.index_add_(0, request, misses)
