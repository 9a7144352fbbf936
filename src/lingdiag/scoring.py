"""How text is scored: the one scoring policy every log-likelihood request carries.

A log-likelihood depends on conventions no tool agrees on: what precedes the text (the
model's BOS, its EOS, nothing), whether a space is put before it, whether its first token is
scored at all. On the same model and BLiMP pairs, lm-evaluation-harness, minicons and
lingdiag's own default disagree on 2-26% of the pairs, so the convention is an explicit,
frozen object: it travels with every ``LoglikelihoodRequest`` (cache keys tell policies
apart), every backend applies it, and runs record it in ``meta.json`` and their tables.

Presets (``--scoring-policy NAME[,NAME...]``; ``+ws`` after a name turns on the
leading-whitespace correction of region surprisal, e.g. ``bos+ws``):

========== ============================ ============ =========== =========================================
name       what precedes the text       leading " "  first token who does this
========== ============================ ============ =========== =========================================
lingdiag   BOS (else EOS), only before  no           scored      lingdiag until now (the default: records
           an empty context                                      of the built-in suites stay as they were)
bos        BOS (else EOS), always       no           scored      lm-eval's ``loglikelihood_rolling``
lm-eval    BOS (else EOS), always       yes          scored      lm-eval's BLiMP task (``" " + sentence``)
minicons   nothing                      no           not scored  minicons' ``sequence_score`` default
========== ============================ ============ =========== =========================================

Where the script has no spaces between words (Chinese, Japanese, Thai: ``UNSPACED_LANGUAGES``),
each policy says what it does (:meth:`ScoringPolicy.unspaced`; a table of such items prints it):
``lingdiag``, ``bos`` and ``minicons`` score the text as written; ``lm-eval`` still puts a space
before it, which no sentence of such a script begins with (kept: it is what lm-eval does); the
``+ws`` correction finds no word boundaries (no token starts with a space) and means nothing there.
Regions are assigned by character offsets in every script (``lingdiag.prompts.regions``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from lingdiag.errors import ConfigError, UnknownNameError

AUTO = "auto"
"""``prefix``: the model's BOS token, else its EOS token (lm-eval's rolling log-likelihood)."""
NONE = "none"
"""``prefix``: nothing precedes the text."""
WS_SUFFIX = "+ws"
"""Appended to a preset's name: the same policy with the leading-whitespace correction on."""


@dataclass(frozen=True, slots=True)
class ScoringPolicy:
    """What precedes a scored text and which of its tokens count."""

    name: str
    """The preset's name (``lingdiag``, ``bos``, ``lm-eval``, ``minicons``, with ``+ws``)."""
    prefix: str = AUTO
    """``auto`` (BOS, else EOS), ``none``, or a literal string tokenized before the context."""
    prefix_scope: Literal["empty-context", "always"] = "always"
    """``always``: the prefix precedes every context, empty or not; ``empty-context``: only an
    empty one (lingdiag's behaviour before policies existed: a non-empty context got none)."""
    leading_space: bool = False
    """Put a space before the continuation (unless the context ends in one or it starts with one)."""
    score_first_token: bool = True
    """Whether the sequence's first token is scored. Only matters when nothing precedes the
    continuation (``prefix`` none, empty context): its first token has no prediction."""
    whitespace_correction: bool = False
    """Region surprisal with the leading-whitespace correction (Oh & Schuler 2024): a region
    takes the probability that the word after it starts a new word, and gives back the one
    that its own first word did (tokenizers that attach a space to the next word)."""

    def __post_init__(self) -> None:
        if self.prefix == NONE and self.score_first_token:
            raise ConfigError(f"scoring policy {self.name!r}: with prefix 'none' the first token of a text "
                              "with an empty context has nothing to be predicted from; set "
                              "score_first_token to false")
        if not self.prefix:
            raise ConfigError(f"scoring policy {self.name!r}: an empty prefix; use 'none'")

    def prefixes(self, context_empty: bool) -> bool:
        """Whether the prefix goes before a context that is (or is not) empty."""
        return self.prefix != NONE and (self.prefix_scope == "always" or context_empty)

    def recorded(self) -> dict[str, Any]:
        """Every field, for ``meta.json`` and cache keys."""
        return {"name": self.name, "prefix": self.prefix, "prefix_scope": self.prefix_scope,
                "leading_space": self.leading_space, "score_first_token": self.score_first_token,
                "whitespace_correction": self.whitespace_correction}

    def describe(self) -> str:
        """One line for a table header."""
        before = {AUTO: "BOS (else EOS)", NONE: "nothing"}.get(self.prefix, repr(self.prefix))
        scope = "" if self.prefix == NONE or self.prefix_scope == "always" else ", only when the context is empty"
        return (f"scoring policy `{self.name}`: before the text: {before}{scope}; "
                f"leading space: {'yes' if self.leading_space else 'no'}; "
                f"first token: {'scored' if self.score_first_token else 'not scored'}"
                + ("; leading-whitespace correction: on" if self.whitespace_correction else ""))


    def unspaced(self) -> str:
        """What this policy does where the script has no spaces between words (one line for a table)."""
        space = ("puts a space before the text as in English, a character no sentence of such a script "
                 "begins with (lm-eval does the same)") if self.leading_space else "scores the text as written"
        correction = ("; the leading-whitespace correction finds no word boundaries there (no token starts "
                      "with a space) and is not meaningful") if self.whitespace_correction else ""
        return f"scoring policy `{self.name}` in a script without spaces: {space}{correction}"


UNSPACED_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo"})
"""Languages written without spaces between words (BCP 47 primary tags)."""

LINGDIAG = ScoringPolicy("lingdiag", prefix_scope="empty-context")
"""The default: exactly what lingdiag did before policies (an empty context gets BOS, else
EOS; a non-empty one is tokenized as it is), so the built-in suites' records and cache keys
stay byte-identical."""

PRESETS: dict[str, ScoringPolicy] = {p.name: p for p in (
    LINGDIAG,
    ScoringPolicy("bos"),
    ScoringPolicy("lm-eval", leading_space=True),
    ScoringPolicy("minicons", prefix=NONE, score_first_token=False),
)}
"""Preset name → policy; see the module docstring for what each reproduces."""


def policy(name: str) -> ScoringPolicy:
    """The preset called ``name``, or ``PRESET+ws`` for it with the whitespace correction on."""
    base, ws, rest = name.partition(WS_SUFFIX)
    if rest or base not in PRESETS:
        raise UnknownNameError("scoring policy", name, [*PRESETS, *(p + WS_SUFFIX for p in PRESETS)])
    chosen = PRESETS[base]
    return replace(chosen, name=name, whitespace_correction=True) if ws else chosen


def policy_names() -> tuple[str, ...]:
    """Every name ``policy`` accepts, presets first."""
    return (*PRESETS, *(p + WS_SUFFIX for p in PRESETS))
