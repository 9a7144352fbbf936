"""Untrusted jinja2 templates rendered within bounds (``lingdiag.io.limits``): the sandbox's
environment with ``**`` and ``*`` computed by the sandbox, never folded while compiling, and
refused when their result would be huge; ``range`` and every call check the clock, so nested
loops stop at the deadline; the output stops at its size bound. Suite-file prompt templates
(``lingdiag.suitefile.templates``) and chat templates read from a tokenizer directory
(``lingdiag.models.hf.chat``) both render here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import MAX_RANGE, SandboxedEnvironment

from lingdiag.io.limits import TEMPLATE_CHARS, TEMPLATE_SECONDS

MAX_POWER_BITS = 4096
"""Bits a ``**`` result may have (a template computes small numbers, if any)."""


class TemplateProblem(ValueError):
    """A template that cannot be used; the message says why (the caller names the file)."""


class TemplateLimit(TemplateProblem):
    """A template that passed a bound on work (output size, time, ``**`` or ``range`` size)."""


class _Budget(threading.local):
    deadline = math.inf


_BUDGET = _Budget()


def _tick() -> None:
    if time.monotonic() > _BUDGET.deadline:
        raise TemplateLimit(f"template rendering takes too long; {TEMPLATE_SECONDS.how_to_raise()}")


def _bounded_range(*args: int) -> Iterator[int]:
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise TemplateLimit(f"range() of {len(rng):,} numbers in a template; at most {MAX_RANGE:,} (a fixed limit)")
    for k in rng:
        _tick()
        yield k


class BoundedEnvironment(SandboxedEnvironment):
    """The sandbox with bounds on what an operator may build and on time."""

    intercepted_binops = frozenset({"**", "*"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals["range"] = _bounded_range

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """``left ** right`` or ``left * right``, refused when the result would be huge."""
        _tick()
        if operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and \
                    right * math.log2(abs(left)) > MAX_POWER_BITS:
                raise TemplateLimit(f"{left} ** {right} in a template is too large a number "
                                    f"(more than {MAX_POWER_BITS:,} bits, a fixed limit)")
            return left ** right
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(times, int) and \
                    len(seq) * times > TEMPLATE_CHARS.value:
                raise TemplateLimit(f"a template builds a text or list of {len(seq) * times:,} items; "
                                    f"{TEMPLATE_CHARS.how_to_raise()}")
        return left * right

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        """Every call checks the clock (a recursive macro is calls)."""
        _tick()
        return super().call(__context, __obj, *args, **kwargs)


def render_bounded(compiled: Any, values: Mapping[str, Any]) -> str:
    """``compiled`` rendered with ``values``, stopped past the output-size or time bound.

    Raises:
        TemplateLimit: a bound passed (one line).
        TemplateProblem: a sandbox refusal, an undefined name or another runtime error of the
            template (one line).
    """
    limit, pieces, size = TEMPLATE_CHARS.value, [], 0
    before = _BUDGET.deadline
    _BUDGET.deadline = time.monotonic() + TEMPLATE_SECONDS.value
    try:
        for piece in compiled.generate(**values):
            size += len(piece)
            if size > limit:
                raise TemplateLimit(f"template output passes {limit:g} characters; {TEMPLATE_CHARS.how_to_raise()}")
            pieces.append(piece)
            _tick()
    except TemplateProblem:
        raise
    except TemplateError as e:
        raise TemplateProblem(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError, MemoryError) as e:
        raise TemplateProblem(f"template error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                              ) from None
    finally:
        _BUDGET.deadline = before
    return "".join(pieces)
