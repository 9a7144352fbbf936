r"""Untrusted text made safe to print on a terminal or in a one-line message.

Rater ids, model names, dataset text and file paths come from outside: printed as they are,
an ESC byte drives the terminal, a newline splits a one-line error, and rich markup such as
``[link=...]`` turns into a hidden link. :func:`plain` escapes control characters (as
``\n``, ``\x1b``, ``\u2028``), :func:`markup_safe` also escapes rich markup for messages
printed with ``markup=True``. :func:`progress_line` is the one wording of a progress line.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line/paragraph separators and lone surrogates (which no
# terminal encoding can print).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def plain(text: str) -> str:
    """``text`` on one line with every control character (and lone surrogate) escaped."""
    return _UNPRINTABLE.sub(_escape, text)


def markup_safe(text: object) -> str:
    """``str(text)`` as :func:`plain`, with rich markup escaped too (for ``console.print``)."""
    from rich.markup import escape  # the command line's dependency; the library loads without rich

    return escape(plain(str(text)))


def plain_lines(text: str) -> str:
    """Multi-line ``text`` (a table) with each line as :func:`plain`; the line breaks kept."""
    return "\n".join(plain(line) for line in text.split("\n"))


def progress_line(label: str, done: int, total: int, rate: float, unit: str = "") -> str:
    """``label: done/total unit, rate unit/s, ETA h:mm:ss`` (ETA 0:00:00 while the rate is 0)."""
    eta = int((total - done) / rate) if rate > 0 else 0
    u = f" {unit}" if unit else ""
    return f"{label}: {done}/{total}{u}, {rate:.2f}{u}/s, ETA {eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d}"
