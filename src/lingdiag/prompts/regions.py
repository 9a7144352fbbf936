"""Region surprisal from per-token log-probabilities: pure functions, no model.

SyntaxGym's convention: a sentence is its regions' contents joined by single spaces (an
empty region adds nothing and scores 0), and a region's surprisal is the sum over the tokens
whose first non-space character falls in it. Regions and tokens meet by character offsets, so
this holds in every script; in one written without spaces (Chinese) the regions are joined
by nothing, and a token that spans two regions counts in the region of its first character.
Surprisal is in bits, as SyntaxGym reports it
(its ``=`` tolerance is in bits).

With the leading-whitespace correction (Oh & Schuler 2024, "Leading whitespaces of language
models' subword vocabulary pose a confound for calculating word probabilities"), a region
also pays for the probability that the token after it starts a new word (its end is a word
end), and is refunded the word-start probability its own first token carried when that
token begins with a space (that boundary belonged to the region before).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Span = tuple[int, int]
"""``[start, end)`` character offsets."""


@dataclass(frozen=True, slots=True)
class Joined:
    """A sentence built from regions, with where each region lies in it."""

    text: str
    spans: tuple[Span, ...]
    """One span per region, in region order; an empty region has an empty span."""


def join(contents: Sequence[str], separator: str = " ") -> Joined:
    """``contents`` joined by single spaces, skipping empty regions (SyntaxGym); by nothing
    (``separator=""``) in a script written without spaces, where regions abut.
    """
    text, spans = "", []
    for content in contents:
        if not content:
            spans.append((len(text), len(text)))
            continue
        if text:
            text += separator
        spans.append((len(text), len(text) + len(content)))
        text += content
    return Joined(text, tuple(spans))


def anchor(text: str, start: int) -> int:
    """The character a token starting at ``start`` belongs to: its first non-space one, else
    the next non-space one after it (a token of spaces only), else the text's last character.
    """
    for k in range(max(start, 0), len(text)):
        if not text[k].isspace():
            return k
    return len(text) - 1


def assign(joined: Joined, token_spans: Sequence[Span]) -> list[int | None]:
    """The region index of each token (None where it lies in no region: an empty text)."""
    out: list[int | None] = []
    for span in token_spans:
        c = anchor(joined.text, span[0])
        out.append(next((r for r, (a, b) in enumerate(joined.spans) if a <= c < b), None))
    return out


def surprisals(joined: Joined, token_spans: Sequence[Span], token_logprobs: Sequence[float],
               word_start: Sequence[float] | None = None) -> list[float]:
    """Surprisal in bits of each region.

    Args:
        joined: The sentence and its region spans.
        token_spans: Character span of each scored token in ``joined.text`` (offsets may start
            before 0 where the policy put a space before the text).
        token_logprobs: Natural-log probability of each scored token.
        word_start: With the leading-whitespace correction: ``word_start[k]`` is the natural-log
            probability that the token predicted at token ``k``'s position starts a word, for
            every scored token and once more after the last (``len(token_logprobs) + 1`` values).

    Returns:
        One surprisal per region (0 for a region no token falls in).
    """
    if len(token_spans) != len(token_logprobs):
        raise ValueError(f"{len(token_spans)} token spans for {len(token_logprobs)} log-probs")
    if word_start is not None and len(word_start) != len(token_logprobs) + 1:
        raise ValueError(f"{len(word_start)} word-start log-probs for {len(token_logprobs)} tokens; need one more")
    regions = assign(joined, token_spans)
    nats = [0.0] * len(joined.spans)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for k, (r, lp) in enumerate(zip(regions, token_logprobs, strict=True)):
        if r is None:
            continue
        nats[r] -= lp
        first.setdefault(r, k)
        last[r] = k
    if word_start is not None:
        for r, k in first.items():
            a = token_spans[k][0]
            if a < 0 or a < len(joined.text) and joined.text[a].isspace():
                nats[r] += word_start[k]  # its leading space was the previous word's end
            nats[r] -= word_start[last[r] + 1]
    return [v / math.log(2) for v in nats]
