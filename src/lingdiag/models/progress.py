"""Progress inside one backend call: a chunk of a run is one call, and on a CPU it can last
minutes. The command line installs a hook with :func:`watching`; the backends :func:`tick` it
as they go (the transformers backends once per decoding step and per scored batch, the OpenAI
backend once per answered request), so a terminal or a log hears from a run every few seconds.

Process-wide rather than a context variable: the OpenAI client may answer on another thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Watcher(Protocol):
    """What the command line installs to hear from the backends."""

    def tick(self, requests: int, tokens: int) -> None:
        """``requests`` answered and ``tokens`` decoded since the previous tick."""

    def stage(self, message: str) -> None:
        """A slow step without ticks began (a model converted or loaded), with its expected cost."""


_watchers: list[Watcher] = []


@contextmanager
def watching(watcher: Watcher) -> Iterator[None]:
    """Send every :func:`tick` and :func:`stage` to ``watcher`` while the block runs."""
    _watchers.append(watcher)
    try:
        yield
    finally:
        _watchers.remove(watcher)


def tick(requests: int = 0, tokens: int = 0) -> None:
    """Tell the watcher (if any) that ``requests`` were answered and ``tokens`` decoded."""
    if _watchers:
        _watchers[-1].tick(requests, tokens)


def stage(message: str) -> None:
    """Tell the watcher (if any) that a slow step began: ``converting X (about 1 min)``."""
    if _watchers:
        _watchers[-1].stage(message)
