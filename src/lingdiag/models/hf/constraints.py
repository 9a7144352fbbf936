"""Constrained decoding for the transformers backend, through xgrammar.

A ``records.Constraint`` (a fixed choice, a regex or a JSON schema) is compiled once per
tokenizer into a grammar; :func:`logits_processor` then gives a transformers
``LogitsProcessor`` that masks, at every step and for every batch row independently,
the tokens that would leave the grammar, and allows only a stop token once the answer
is complete. Left-padded batches are fine: each row's matcher only ever reads the token
generated last in that row.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.records import Constraint


def available() -> bool:
    """Whether the structured-generation library (xgrammar) is installed."""
    return find_spec("xgrammar") is not None


def choice_grammar(choices: Sequence[str]) -> str:
    """An EBNF grammar (xgrammar's dialect) accepting exactly one of ``choices``.

    Args:
        choices: The allowed answers; each is matched literally.

    Returns:
        The grammar text, e.g. ``root ::= "so" | "because"``.
    """
    if not choices or any(not c for c in choices):
        raise ConfigError("a choice constraint needs at least one non-empty choice")
    # JSON string escaping is a subset of the EBNF literal escapes xgrammar accepts.
    return "root ::= " + " | ".join(json.dumps(c, ensure_ascii=False) for c in choices)


@dataclass
class _Compiler:
    compiler: Any
    vocab_size: int
    stop_ids: tuple[int, ...]


# One compiler per tokenizer object: building the TokenizerInfo walks the whole vocabulary.
_COMPILERS: weakref.WeakKeyDictionary[Any, _Compiler] = weakref.WeakKeyDictionary()


def _compiler(tokenizer: Any, vocab_size: int, stop_ids: tuple[int, ...]) -> _Compiler:
    try:
        import xgrammar as xgr
    except ImportError as e:
        raise MissingDependency("constrained decoding", "constrained", ["xgrammar"]) from e
    cached = _COMPILERS.get(tokenizer)
    if cached is None or cached.vocab_size != vocab_size or cached.stop_ids != stop_ids:
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=list(stop_ids))
        cached = _Compiler(xgr.GrammarCompiler(info, max_threads=1), vocab_size, stop_ids)
        _COMPILERS[tokenizer] = cached
    return cached


def compile_constraint(constraint: Constraint, tokenizer: Any, vocab_size: int, stop_ids: Sequence[int]) -> Any:
    """Compile ``constraint`` for ``tokenizer`` (cached by xgrammar per grammar text).

    Args:
        constraint: What the answer must match.
        tokenizer: The model's transformers tokenizer.
        vocab_size: Width of the model's logits (may exceed the tokenizer's size).
        stop_ids: Token ids that end generation; one of them is forced after the answer.

    Returns:
        An ``xgrammar.CompiledGrammar``.
    """
    c = _compiler(tokenizer, vocab_size, tuple(sorted(set(stop_ids)))).compiler
    match constraint.kind:
        case "choice":
            return c.compile_grammar(choice_grammar(constraint.choices))
        case "regex":
            if not constraint.pattern:
                raise ConfigError("a regex constraint needs a pattern")
            return c.compile_regex(constraint.pattern)
        case "json_schema":
            if not constraint.schema:
                raise ConfigError("a json_schema constraint needs a schema")
            return c.compile_json_schema(constraint.schema)
    raise ConfigError(f"unknown constraint kind {constraint.kind!r}; valid: choice, regex, json_schema")


def logits_processor(
    constraint: Constraint,
    tokenizer: Any,
    batch: int,
    *,
    vocab_size: int,
    stop_ids: Sequence[int],
) -> Any:
    """A transformers ``LogitsProcessor`` enforcing ``constraint`` on every row of a batch.

    Use a new processor for each ``generate`` call: it keeps per-row grammar state.

    Args:
        constraint: What each row's answer must match.
        tokenizer: The model's transformers tokenizer.
        batch: Number of rows in the ``generate`` call.
        vocab_size: Width of the model's logits.
        stop_ids: The token ids ``generate`` treats as end of sequence.

    Returns:
        The processor, to pass in ``logits_processor=[...]``.
    """
    import torch
    import xgrammar as xgr
    from transformers import LogitsProcessor

    grammar = compile_constraint(constraint, tokenizer, vocab_size, stop_ids)

    class GrammarProcessor(LogitsProcessor):
        """Masks each row's logits to the tokens its grammar matcher allows next."""

        def __init__(self) -> None:
            self.matchers = [xgr.GrammarMatcher(grammar) for _ in range(batch)]
            self.bitmask = xgr.allocate_token_bitmask(batch, vocab_size)
            self.started = False

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            if input_ids.shape[0] != batch:
                raise ConfigError(f"constraint processor built for {batch} rows got {input_ids.shape[0]}")
            last = input_ids[:, -1].tolist()
            for row, matcher in enumerate(self.matchers):
                # The first call sees only the (left-padded) prompt; later calls see each
                # row's previous pick. A finished row keeps receiving padding: skip it.
                if self.started and not matcher.is_terminated():
                    matcher.accept_token(last[row])
                if matcher.is_terminated():
                    self.bitmask[row].fill_(-1)  # anything: generate() pads finished rows itself
                else:
                    matcher.fill_next_token_bitmask(self.bitmask, row)
            self.started = True
            masked = scores.float().contiguous() if scores.dtype != torch.float32 else scores.contiguous()
            # The matchers fill the bitmask on the CPU; the logits' device gets a copy (none on the CPU).
            xgr.apply_token_bitmask_inplace(masked, self.bitmask.to(masked.device, non_blocking=True))
            return masked

    return GrammarProcessor()
