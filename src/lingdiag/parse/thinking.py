"""Splitting a thinking model's trace from its answer, once per generation, before any parser.

See ``lingdiag.thinking`` for the forms recognised; the run calls :func:`separate` on every
generation, whatever the backend, so parsers, constraints and metrics see answers only.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lingdiag.errors import ConfigError
from lingdiag.records import Generation
from lingdiag.thinking import DEFAULT_TAGS, ThinkTags

_CHANNEL = re.compile(r"<\|channel\|>(\w+)(?:\s[^<]*)?<\|message\|>")
_CHANNEL_END = re.compile(r"<\|(?:end|return|call)\|>")


def separate(g: Generation, tags: ThinkTags | None = DEFAULT_TAGS) -> Generation:
    """``g`` with its trace split from its answer: ``text`` becomes the answer alone.

    A generation a backend already split (a server field, the transformers backend's thinking
    path) is returned as it is. Else gpt-oss's channels, then the inline ``tags``: a closing tag
    ends the trace (an opening tag before it is optional: the template may have opened the
    block); an opening tag at the start with no closing tag is a trace that never closed, so
    the generation is ``unfinished`` with an empty answer (nothing inside a trace is ever parsed
    as the answer). ``tags`` None: no inline separation (the raw text is the answer).
    """
    if g.error is not None or g.reasoning is not None or g.unfinished:
        return g
    text = g.text
    if "<|channel|>" in text:
        return _channels(g)
    if tags is None:
        return g
    if tags.close in text:
        before, _, after = text.partition(tags.close)
        head, opened, trace = before.partition(tags.open)
        return replace(g, text=after.strip(), reasoning=(trace if opened else head).strip())
    stripped = text.lstrip()
    if stripped.startswith(tags.open):
        return replace(g, text="", reasoning=stripped[len(tags.open):].strip(), unfinished=True,
                       reasoning_tokens=g.reasoning_tokens or g.n_tokens)
    return g


def _channels(g: Generation) -> Generation:
    """gpt-oss's harmony format: the ``analysis`` channel is the trace, ``final`` the answer.

    Raises:
        ConfigError: a channel other than analysis and final (tool calls: ``commentary``).
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
        raise ConfigError(f"gpt-oss channel {other[0]!r} is not supported (lingdiag reads the analysis and final "
                          "channels; tool calls have no place in a diagnostic answer)")
    if "final" not in parts:
        return replace(g, text="", reasoning=parts.get("analysis", "").strip(), unfinished=True,
                       reasoning_tokens=g.reasoning_tokens or g.n_tokens)
    return replace(g, text=parts["final"].strip(), reasoning=parts.get("analysis", "").strip())
