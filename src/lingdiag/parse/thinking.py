"""Splitting a thinking model's trace from its answer, once per generation, before any parser.

See ``lingdiag.thinking`` for the forms recognised; the run calls :func:`separate` on every
generation, whatever the backend, so parsers, constraints and metrics see answers only.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lingdiag.parse.normalise import INVISIBLE
from lingdiag.records import Generation
from lingdiag.thinking import DEFAULT_TAGS, ThinkTags

_CHANNEL = re.compile(r"<\|channel\|>(\w+)(?:\s[^<]*)?<\|message\|>")
_CHANNEL_END = re.compile(r"<\|(?:end|return|call)\|>")
_INVISIBLE = re.compile(INVISIBLE)
_HARMONY = re.compile(r"\s*(?:<\|start\|>assistant)?<\|channel\|>\w+(?:\s[^<]*)?<\|message\|>")
"""How a real gpt-oss answer begins: a channel header, nothing before it (an answer that only
*mentions* ``<|channel|>`` is not one)."""


def separate(g: Generation, tags: ThinkTags | None = DEFAULT_TAGS) -> Generation:
    r"""``g`` with every trace split from its answer: ``text`` becomes the answer alone.

    The one place that decides what is thinking, for every server shape. A server's field
    (``reasoning``) is a trace only when it holds text: an empty field, or an empty inline block
    (``<think>\n\n</think>``, what Qwen3 writes with thinking off), is no thinking and adds no
    thinking count. Whatever a server separated, the content is still searched for inline
    ``tags`` (a server that left a second trace in it): everything before the last closing tag
    is trace (an opening tag before it is optional: the template may have opened the block); an
    opening tag with no closing tag after it is a trace that never closed, so the generation is
    ``unfinished`` with an empty answer. gpt-oss's channels are read only in an answer that opens
    with a channel header. ``tags`` None: the raw text is the answer (no inline tags, no
    channels). A generation the parser cannot read (a tool call's channel) fails alone, with
    its reason: it never aborts the run.
    """
    if g.error is not None or g.unfinished:
        return g
    g = _without_empty_thinking(g)
    if tags is None:
        return g
    if _HARMONY.match(g.text):
        return _channels(g)
    return _inline(g, tags)


def _visible(text: str) -> bool:
    """Whether ``text`` holds more than spaces and zero-width or bidi marks."""
    return bool(_INVISIBLE.sub("", text).strip())


def _without_empty_thinking(g: Generation) -> Generation:
    """``g`` with an empty reasoning field and a zero thinking count dropped (neither is thinking)."""
    reasoning = g.reasoning if g.reasoning is not None and _visible(g.reasoning) else None
    tokens = g.reasoning_tokens or None
    if (reasoning, tokens) == (g.reasoning, g.reasoning_tokens):
        return g
    return replace(g, reasoning=reasoning, reasoning_tokens=tokens)


def _joined(*traces: str | None) -> str | None:
    """Traces with text, joined by a blank line (None: none had any)."""
    kept = [t.strip() for t in traces if t is not None and _visible(t)]
    return "\n\n".join(kept) or None


def _inline(g: Generation, tags: ThinkTags) -> Generation:
    """``g`` with the inline ``tags`` blocks of its text taken out as trace."""
    text, trace = g.text, None
    if tags.close in text:  # all before the last closing tag is trace, however many blocks it holds
        before, _, text = text.rpartition(tags.close)
        trace = before.replace(tags.open, "\n\n").replace(tags.close, "\n\n")
    if tags.open in text:  # opened after the last close, or never closed
        reasoning = _joined(g.reasoning, trace, text.replace(tags.open, "\n\n"))
        return replace(g, text="", reasoning=reasoning or "", unfinished=True,
                       reasoning_tokens=g.reasoning_tokens or g.n_tokens)
    if trace is None:
        return g
    return replace(g, text=text.strip(), reasoning=_joined(g.reasoning, trace))


def _channels(g: Generation) -> Generation:
    """gpt-oss's harmony format: the ``analysis`` channel is the trace, ``final`` the answer.

    Any other channel (a tool call: ``commentary``) has no place in a diagnostic answer: the
    generation fails with that reason (recorded per item, never an abort).
    """
    parts: dict[str, str] = {}
    found = list(_CHANNEL.finditer(g.text))
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(g.text)
        body = g.text[m.end():end]
        stop = _CHANNEL_END.search(body)
        parts[m.group(1)] = parts.get(m.group(1), "") + (body[:stop.start()] if stop else body)
    other = sorted(set(parts) - {"analysis", "final"})
    if other:
        return replace(g, text="", error=f"gpt-oss channel {other[0]!r} is not supported (lingdiag reads the "
                                         "analysis and final channels; tool calls have no place in a diagnostic "
                                         "answer)")
    reasoning = _joined(g.reasoning, parts.get("analysis"))
    if "final" not in parts:
        return replace(g, text="", reasoning=reasoning or "", unfinished=True,
                       reasoning_tokens=g.reasoning_tokens or g.n_tokens)
    return replace(g, text=parts["final"].strip(), reasoning=reasoning)
