"""Thinking: the setting a generation request carries, and how a thinking model's text is split.

A reasoning model writes a trace before its answer: inline between tags (``<think>…</think>``;
only the closing tag when the chat template opened the block), in a separate server field
(vLLM and SGLang's ``reasoning`` or older ``reasoning_content``), in gpt-oss's channels
(``<|channel|>analysis<|message|>…<|end|>…<|channel|>final<|message|>…``), or not at all
(hosted models that bill reasoning tokens but never show them). The run splits every
generation the same way (``lingdiag.parse.thinking.separate``), once, before any parser runs:
parsers, constraints and metrics see the answer only, and a trace that never closed is the
outcome ``unfinished``, never an answer.

The ``--thinking`` axis (``off``, ``on``, ``budget:N``, ``effort:low|medium|high``) makes each
setting a condition; the setting travels with every ``GenerationRequest`` (so cache keys tell
settings apart) and the backend applies it (the chat template's switch, budget forcing, the
server's ``chat_template_kwargs`` and ``reasoning_effort``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from lingdiag.errors import ConfigError

OPEN, CLOSE = "<think>", "</think>"
"""The default tags: DeepSeek-R1, Qwen3 and their distills."""
THINKING_CAP = 8192
"""Thinking tokens a setting without a budget (``on``, ``effort:X``) may spend before the
generation is cut and recorded ``unfinished``; the answer keeps its own ``max_new_tokens``."""
EFFORTS = ("low", "medium", "high")
Mode = Literal["off", "on", "budget", "effort"]



@dataclass(frozen=True, slots=True)
class ThinkTags:
    """The tags around an inline trace."""

    open: str = OPEN
    close: str = CLOSE

    @classmethod
    def parse(cls, text: str) -> ThinkTags | None:
        """``OPEN,CLOSE`` (e.g. ``<reasoning>,</reasoning>``), or ``none`` for no inline separation."""
        if text.strip().lower() == "none":
            return None
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise ConfigError(f"think tags {text!r}: give OPEN,CLOSE (e.g. '<think>,</think>') or none")
        return cls(parts[0], parts[1])

    def wrap(self, reasoning: str) -> str:
        """A completed trace as the model's turn holds it before its answer: the trace between its
        tags, a newline inside each and a blank line after (what budget forcing writes).
        """
        return f"{self.open}\n{reasoning}\n{self.close}\n\n"

    def after(self, rendered: str, prefix: str) -> str:
        """``prefix`` (a :meth:`wrap`-ped trace) written after ``rendered``, a prompt whose assistant
        turn is open: a template that opened the thinking block itself is not given the opening tag
        twice (as the thinking phase of generation does not add it then).
        """
        if rendered.rstrip().endswith(self.open) and prefix.startswith(self.open):
            return rendered + prefix[len(self.open):].lstrip("\n")
        return rendered + prefix


DEFAULT_TAGS = ThinkTags()


def replay(rendered: str, prefix: str, thinking: Thinking | None) -> str:
    """``rendered`` (a chat prompt with the assistant turn open) continued with ``prefix``, a replayed
    trace in the tags of ``thinking`` (the default tags without a setting): ``ThinkTags.after``.
    """
    return (thinking.tags if thinking else DEFAULT_TAGS).after(rendered, prefix) if prefix else rendered


@dataclass(frozen=True, slots=True)
class Thinking:
    """One thinking setting, as a request carries it and ``meta.json`` records it."""

    mode: Mode
    """``off``: the switch off; ``on``: on, up to ``budget`` tokens (``THINKING_CAP`` unless
    ``on:N``); ``budget``: on, and the block closed after ``budget`` tokens (budget forcing);
    ``effort``: a server's ``reasoning_effort``."""
    budget: int = THINKING_CAP
    """Thinking tokens allowed (forced closed at this count under ``budget``, cut and
    ``unfinished`` otherwise)."""
    effort: str = ""
    """``low``, ``medium`` or ``high`` under ``effort``."""
    tags: ThinkTags = DEFAULT_TAGS

    @property
    def name(self) -> str:
        """The axis value: ``off``, ``on`` (``on:N`` with another cap), ``budget:N`` or ``effort:X``."""
        if self.mode == "on" and self.budget != THINKING_CAP:
            return f"on:{self.budget}"
        return {"budget": f"budget:{self.budget}", "effort": f"effort:{self.effort}"}.get(self.mode, self.mode)

    @property
    def thinks(self) -> bool:
        """Whether the model is asked to think."""
        return self.mode != "off"

    def recorded(self) -> dict[str, Any]:
        """The setting as ``meta.json`` and cache keys hold it."""
        return {"setting": self.name, "budget": self.budget if self.thinks else 0, "effort": self.effort,
                "tags": [self.tags.open, self.tags.close], "forced": self.mode == "budget"}

    @classmethod
    def parse(cls, value: str, tags: ThinkTags = DEFAULT_TAGS) -> Thinking:
        """An axis value (``off``, ``on``, ``on:N``, ``budget:N``, ``effort:low|medium|high``) as a setting."""
        head, _, arg = value.strip().partition(":")
        if head in ("off", "on") and not arg:
            return cls(head, tags=tags)  # type: ignore[arg-type]
        if head in ("on", "budget") and arg.isdigit() and int(arg) > 0:
            return cls(head, budget=int(arg), tags=tags)  # type: ignore[arg-type]
        if head == "effort" and arg in EFFORTS:
            return cls("effort", effort=arg, tags=tags)
        raise ConfigError(f"--thinking {value!r}: valid settings are off, on, on:N (thinking capped at N tokens), "
                          f"budget:N (closed after N tokens) and effort:{'|'.join(EFFORTS)}")


@runtime_checkable
class ChecksThinking(Protocol):
    """A backend that can tell, before any request, whether its model can be asked for a setting."""

    def check_thinking(self, thinking: Thinking) -> None:
        """Refuse a setting the model has no switch for.

        Raises:
            ConfigError: naming the model and the setting.
        """
        ...
