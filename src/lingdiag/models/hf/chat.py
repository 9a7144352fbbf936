"""A tokenizer's chat template rendered within the bounds of untrusted templates.

A chat template read from someone else's tokenizer directory is code in jinja2: transformers
renders it in its sandbox but without bounds, so ``{{ 2**(10**10) }}`` hangs while compiling,
nested ``range`` loops run for hours and a loop can write gigabytes. Here the same template
renders in ``lingdiag.io.templates``' bounded environment, set up as transformers sets up its
own (whitespace options, extensions, filters and globals taken from transformers' environment,
so what a well-formed template writes is unchanged) and given the same variables
``apply_chat_template`` gives it for a conversation of plain text turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from lingdiag.errors import ConfigError
from lingdiag.io.templates import BoundedEnvironment, TemplateLimit, TemplateProblem, render_bounded
from lingdiag.records import ChatMessage


class _ChatEnvironment(BoundedEnvironment, ImmutableSandboxedEnvironment):
    """The bounded sandbox that, like transformers', also refuses methods that mutate lists and dicts."""


@lru_cache(maxsize=1)
def _environment() -> _ChatEnvironment:
    from transformers.utils.chat_template_utils import _compile_jinja_template

    reference = _compile_jinja_template("").environment
    env = _ChatEnvironment(trim_blocks=reference.trim_blocks, lstrip_blocks=reference.lstrip_blocks,
                           extensions=[type(e) for e in reference.extensions.values()])
    env.filters.update(reference.filters)
    # The bounded range stays: transformers' globals add names (raise_exception, namespace, ...), not range.
    env.globals.update({k: v for k, v in reference.globals.items() if k != "range"})
    return env


@lru_cache(maxsize=8)
def _compiled(source: str) -> Any:
    # Compiling in the bounded environment: its ``**`` and ``*`` are never folded at compile time.
    return _environment().from_string(source)


def _plain(value: Any) -> Any:
    """Special-token values as the plain strings and lists transformers hands the template."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def render_chat(tokenizer: Any, messages: Sequence[ChatMessage], switch: Mapping[str, Any], where: str) -> str:
    """``messages`` rendered by ``tokenizer``'s chat template with the generation prompt opened.

    What ``tokenizer.apply_chat_template(..., add_generation_prompt=True, tokenize=False,
    **switch)`` returns for a well-formed template, rendered in the bounded sandbox.

    Raises:
        ConfigError: the template passed a bound (one line naming ``where``, the bound and how to raise it).
        jinja2.TemplateError: the template refused the conversation (``raise_exception``) or failed
            at run time, as from ``apply_chat_template`` (the caller's system-turn fallback reads it).
    """
    values: dict[str, Any] = {k: _plain(v) for k, v in tokenizer.special_tokens_map.items()}
    values.update(switch)
    values.update(messages=[{"role": m.role, "content": m.content} for m in messages], tools=None,
                  documents=None, add_generation_prompt=True)
    try:
        return render_bounded(_compiled(tokenizer.get_chat_template()), values)
    except TemplateLimit as e:
        raise ConfigError(f"the chat template of the tokenizer in {where}: {e}") from None
    except TemplateProblem as e:
        raise TemplateError(str(e)) from None
