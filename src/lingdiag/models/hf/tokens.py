"""A log-likelihood request's tokens under its scoring policy, and per-token scoring.

``split_request`` turns a request into context and continuation tokens as its
``ScoringPolicy`` says (``lingdiag.scoring``): what precedes the text, a leading space, which
tokens are scored, and where each continuation token lies in the requested text. The
default policy (``lingdiag``) reproduces exactly what lingdiag did before policies: an empty
context stands for ``prefix_id`` (BOS, else EOS); a non-empty one is tokenized as the
tokenizer does by default (SmolLM2's adds nothing, Gemma's adds its BOS).

``TokenScorer`` runs per-token requests in full, one row each (logits at every position),
and returns each scored token's log-prob and span, and with the whitespace correction the
probability that the next token starts a word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lingdiag.models.hf.batching import Budget
from lingdiag.models.hf.forward import full_logits
from lingdiag.models.hf.load import LoadedModel
from lingdiag.records import GenerationRequest, LogLikelihood, LoglikelihoodRequest
from lingdiag.scoring import AUTO, NONE, ScoringPolicy

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True, slots=True)
class Split:
    """A request as tokens: what the model reads before the scored text, and the scored text."""

    ctx: list[int]
    """Context tokens, the policy's prefix included (may be empty: nothing precedes)."""
    cont: list[int]
    """Continuation tokens; all are scored except the first when ``ctx`` is empty."""
    spans: tuple[tuple[int, int], ...] = ()
    """Per-token requests: each continuation token's ``[start, end)`` in the requested
    continuation (a space the policy or the context's trailing spaces added before it is at
    negative offsets)."""

    @property
    def scored(self) -> int:
        """How many continuation tokens are scored."""
        return len(self.cont) - (0 if self.ctx else 1)

    @property
    def first(self) -> int:
        """The first scored position of ``(ctx + cont)[:-1]``."""
        return max(len(self.ctx) - 1, 0)


def _prefix(lm: LoadedModel, policy: ScoringPolicy) -> list[int]:
    if policy.prefix == AUTO:
        return [lm.prefix_id]
    if policy.prefix == NONE:
        return []
    return list(lm.tokenizer(policy.prefix, add_special_tokens=False)["input_ids"])


def _encode(lm: LoadedModel, text: str, special: bool, offsets: bool) -> tuple[list[int], list[tuple[int, int]]]:
    enc = lm.tokenizer(text, add_special_tokens=special, return_offsets_mapping=offsets)
    return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]] if offsets else []


def split_request(lm: LoadedModel, r: LoglikelihoodRequest) -> Split:
    """Context and continuation tokens of ``r``, tokenized as lm-eval does, under ``r.policy``.

    A space at the end of the context belongs to the continuation; the continuation is what
    the tokenized whole adds to the tokenized context. A chat context (``r.messages``) is the
    prompt tokens generation would get for the same messages, and the continuation is
    tokenized on its own (the policy does not apply: the chat template decides the tokens); an
    ``assistant_prefix`` (replayed thinking) is part of the context, never scored.
    """
    offsets = r.per_token
    if r.messages:
        ctx, _ = lm.encode(GenerationRequest(messages=r.messages, thinking=r.thinking), r.assistant_prefix)
        cont, spans = _encode(lm, r.continuation, False, offsets)
        return Split(ctx, cont, tuple(spans))
    policy = r.policy
    context, continuation, shift = r.context, r.continuation, 0
    if policy.leading_space and not context.endswith(" ") and not continuation[:1].isspace():
        continuation, shift = " " + continuation, 1
    n_spaces = len(context) - len(context.rstrip(" "))
    if n_spaces:
        context, continuation, shift = context[:-n_spaces], context[-n_spaces:] + continuation, shift + n_spaces
    if not context:
        cont, spans = _encode(lm, continuation, False, offsets)
        ctx = _prefix(lm, policy) if policy.prefixes(context_empty=True) else []
        base = 0
    else:
        # ``lingdiag``: the context as the tokenizer makes it by default; else the policy's prefix.
        special = not policy.prefixes(context_empty=False) and policy.prefix_scope == "empty-context"
        whole, whole_spans = _encode(lm, context + continuation, special, offsets)
        ctx = list(lm.tokenizer(context, add_special_tokens=special)["input_ids"])
        cont, spans = whole[len(ctx):], whole_spans[len(ctx):]
        base = len(context)
        if policy.prefixes(context_empty=False):
            ctx = _prefix(lm, policy) + ctx
    return Split(ctx, cont, tuple((a - base - shift, b - base - shift) for a, b in spans))


def word_start_ids(tokenizer: Any, size: int) -> list[int]:
    """Ids (below ``size``) of the tokens whose text begins with whitespace: the tokens that start a
    word in tokenizers that attach the space to the next word.
    """
    n = min(size, len(tokenizer))
    return [i for i in range(n) if tokenizer.decode([i])[:1].isspace()]


class TokenScorer:
    """Per-token scoring: each request in full, logits at every position, in float64."""

    def __init__(self, lm: LoadedModel, usage: Any) -> None:
        """Score on ``lm``, counting work into ``usage``."""
        self.lm, self.usage = lm, usage
        self._word_start: torch.Tensor | None = None

    def _word_start_mask(self, vocab: int, device: torch.device) -> torch.Tensor:
        import torch

        if self._word_start is None or self._word_start.shape[0] != vocab or self._word_start.device != device:
            mask = torch.zeros(vocab, dtype=torch.bool, device=device)
            mask[word_start_ids(self.lm.tokenizer, vocab)] = True
            self._word_start = mask
        return self._word_start

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], splits: Sequence[Split],
                      budget: Budget) -> list[LogLikelihood]:
        """One ``LogLikelihood`` per request with ``token_logprobs`` and ``token_spans`` (and
        ``word_start_logprobs`` under the whitespace correction).
        """
        import torch

        ws = [r.policy.whitespace_correction for r in requests]
        # With the correction, the last token is read too: the word-start probability after it.
        seqs = [(s.ctx + s.cont) if w else (s.ctx + s.cont)[:-1] for s, w in zip(splits, ws, strict=True)]
        out: list[LogLikelihood | None] = [None] * len(requests)

        def use(batch: list[int], logits: torch.Tensor) -> None:
            for row, i in enumerate(batch):
                s = splits[i]
                full = s.ctx + s.cont
                first, last = s.first, len(full) - 1  # positions first..last-1 predict full[first+1..last]
                lp = torch.log_softmax(logits[row, first:len(seqs[i])].double(), dim=-1)
                target = torch.tensor(full[first + 1:], device=lp.device)
                picked = lp[:last - first].gather(1, target[:, None]).squeeze(1)
                spans = s.spans[len(s.cont) - s.scored:]
                word_start = None
                if ws[i]:
                    chosen = self._word_start_mask(lp.shape[1], lp.device)
                    word_start = tuple(torch.logsumexp(lp[:, chosen], dim=-1).tolist())
                out[i] = LogLikelihood(
                    logprob=float(picked.sum()), n_tokens=s.scored,
                    is_greedy=bool((lp[:last - first].argmax(-1) == target).all()),
                    token_logprobs=tuple(picked.tolist()), token_spans=spans, word_start_logprobs=word_start)
        full_logits(self.lm, self.usage, seqs, budget.tokens, budget.max_batch, use)
        return [r for r in out if r is not None]
