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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lingdiag.models.hf.batching import Budget
from lingdiag.models.hf.forward import full_logits
from lingdiag.models.hf.load import LoadedModel
from lingdiag.records import ChatMessage, GenerationRequest, LogLikelihood, LoglikelihoodRequest
from lingdiag.scoring import AUTO, NONE, ScoringPolicy
from lingdiag.thinking import Thinking

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


Encoding = tuple[list[int], list[tuple[int, int]]]
"""Token ids and, where asked, each token's character offsets."""


class Encoder:
    """One call's tokenizations: each distinct text once, many at a time.

    A call repeats its contexts (ImperfectiveNLI scores three labels after each prompt) and the
    tokenizer's batch encode runs in Rust across threads: on an H100 the one-at-a-time encodes of
    1,200 requests took about as long as scoring them (bench/gpu.py). Batch and single encodes give
    the same ids.
    """

    def __init__(self, lm: LoadedModel) -> None:
        """Tokenize with ``lm``'s tokenizer (and chat template)."""
        self.lm = lm
        self._texts: dict[tuple[str, bool, bool], Encoding] = {}
        self._chats: dict[tuple[tuple[ChatMessage, ...], Thinking | None, str], list[int]] = {}

    def prefetch(self, keys: Iterable[tuple[str, bool, bool]]) -> None:
        """Encode the ``(text, special tokens, offsets)`` not yet known, one batch per flag pair."""
        by_flags: dict[tuple[bool, bool], list[str]] = {}
        for text, special, offsets in dict.fromkeys(keys):
            if (text, special, offsets) not in self._texts:
                by_flags.setdefault((special, offsets), []).append(text)
        for (special, offsets), texts in by_flags.items():
            enc = self.lm.tokenizer(texts, add_special_tokens=special, return_offsets_mapping=offsets)
            for i, text in enumerate(texts):
                self._texts[text, special, offsets] = (
                    list(enc["input_ids"][i]), [tuple(o) for o in enc["offset_mapping"][i]] if offsets else [])

    def __call__(self, text: str, special: bool, offsets: bool) -> Encoding:
        """``text``'s tokens (with ``special`` tokens added, with ``offsets``)."""
        if (text, special, offsets) not in self._texts:
            self.prefetch([(text, special, offsets)])
        return self._texts[text, special, offsets]

    def chat(self, r: LoglikelihoodRequest) -> list[int]:
        """The prompt tokens generation gets for ``r``'s messages (under its thinking setting), then its
        ``assistant_prefix`` (replayed thinking).
        """
        key = (r.messages, r.thinking, r.assistant_prefix)
        if key not in self._chats:
            self._chats[key] = self.lm.encode(GenerationRequest(messages=r.messages, thinking=r.thinking),
                                              r.assistant_prefix)[0]
        return self._chats[key]


@dataclass(frozen=True, slots=True)
class _Texts:
    """A text request's context and continuation as the policy reshapes them, before tokenizing."""

    context: str
    continuation: str
    shift: int
    """Characters put before the requested continuation (a policy's space, the context's trailing spaces)."""
    special: bool
    """Whether a non-empty context is tokenized with the tokenizer's special tokens."""

    @classmethod
    def of(cls, r: LoglikelihoodRequest) -> _Texts:
        policy = r.policy
        context, continuation, shift = r.context, r.continuation, 0
        if policy.leading_space and not context.endswith(" ") and not continuation[:1].isspace():
            continuation, shift = " " + continuation, 1
        n_spaces = len(context) - len(context.rstrip(" "))
        if n_spaces:
            context, continuation, shift = context[:-n_spaces], context[-n_spaces:] + continuation, shift + n_spaces
        # ``lingdiag``: the context as the tokenizer makes it by default; else the policy's prefix.
        special = not policy.prefixes(context_empty=False) and policy.prefix_scope == "empty-context"
        return cls(context, continuation, shift, special)

    def keys(self, offsets: bool) -> list[tuple[str, bool, bool]]:
        """The encodes ``split_request`` makes of these texts."""
        if not self.context:
            return [(self.continuation, False, offsets)]
        return [(self.context + self.continuation, self.special, offsets), (self.context, self.special, False)]


def split_requests(lm: LoadedModel, requests: Sequence[LoglikelihoodRequest]) -> list[Split]:
    """``split_request`` of each request, the call's texts tokenized together (``Encoder``)."""
    encoder = Encoder(lm)
    texts = [None if r.messages else _Texts.of(r) for r in requests]
    encoder.prefetch(k for r, t in zip(requests, texts, strict=True)
                     for k in (t.keys(r.per_token) if t else [(r.continuation, False, r.per_token)]))
    return [_split(lm, r, t, encoder) for r, t in zip(requests, texts, strict=True)]


def split_request(lm: LoadedModel, r: LoglikelihoodRequest) -> Split:
    """Context and continuation tokens of ``r``, tokenized as lm-eval does, under ``r.policy``.

    A space at the end of the context belongs to the continuation; the continuation is what
    the tokenized whole adds to the tokenized context. A chat context (``r.messages``) is the
    prompt tokens generation would get for the same messages, and the continuation is
    tokenized on its own (the policy does not apply: the chat template decides the tokens); an
    ``assistant_prefix`` (replayed thinking) is part of the context, never scored.
    """
    return _split(lm, r, None if r.messages else _Texts.of(r), Encoder(lm))


def _split(lm: LoadedModel, r: LoglikelihoodRequest, texts: _Texts | None, encode: Encoder) -> Split:
    """``split_request`` of ``r``, whose text context and continuation are ``texts`` (None: a chat context)."""
    offsets = r.per_token
    if texts is None:
        cont, spans = encode(r.continuation, False, offsets)
        return Split(encode.chat(r), cont, tuple(spans))
    policy = r.policy
    if not texts.context:
        cont, spans = encode(texts.continuation, False, offsets)
        ctx = _prefix(lm, policy) if policy.prefixes(context_empty=True) else []
        base = 0
    else:
        whole, whole_spans = encode(texts.context + texts.continuation, texts.special, offsets)
        ctx = list(encode(texts.context, texts.special, False)[0])
        cont, spans = whole[len(ctx):], whole_spans[len(ctx):]
        base = len(texts.context)
        if policy.prefixes(context_empty=False):
            ctx = _prefix(lm, policy) + ctx
    return Split(ctx, cont, tuple((a - base - texts.shift, b - base - texts.shift) for a, b in spans))


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
