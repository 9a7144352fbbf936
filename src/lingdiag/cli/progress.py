r"""What ``lingdiag run`` says while it works: a line (or a bar) per chunk from the run's callback,
and within a chunk what the backends tick (:mod:`lingdiag.models.progress`): answers, decoded
tokens, and slow stages such as converting or loading a model. A run is never quiet for longer
than ``QUIET`` seconds, so that a hung run and a slow one look different.

On a terminal a rich bar carries the counts; in a log (stderr not a terminal) each report is one
plain line, with no ``\r`` frames and no wrapping.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from lingdiag.io.terminal import plain, progress_line

QUIET = 8.0
"""The longest a run stays silent, in seconds (a log's heartbeat)."""


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class RunProgress:
    """The run's ``progress`` callback and the backends' watcher in one, with a heartbeat thread."""

    def __init__(self, console: Console, *, bar: bool) -> None:
        """Report on ``console``: a rich bar when ``bar``, else plain lines."""
        self.console = console
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console) if bar else None
        self.lock = threading.Lock()
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, tuple[float, int]] = {}
        self.condition, self.done, self.total = "", 0, 0
        self.answers = self.tokens = 0
        self.chunk_start = self.last_said = time.monotonic()
        self.stop = threading.Event()
        self.beat = threading.Thread(target=self._heartbeat, daemon=True)

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.start()
        self.beat.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop.set()
        self.beat.join()
        if self.bar is not None:
            self.bar.stop()

    def _say(self, line: str) -> None:
        """One plain line (the caller holds the lock)."""
        self.console.print(plain(line), markup=False, highlight=False, soft_wrap=True)
        self.last_said = time.monotonic()

    def __call__(self, condition: str, done: int, total: int) -> None:
        """The run's callback, after each chunk (first call of a condition: where it starts)."""
        with self.lock:
            now = time.monotonic()
            first = condition not in self.started
            if first:
                self.started[condition] = (now, done)
            self.condition, self.done, self.total = condition, done, total
            self.answers = self.tokens = 0
            self.chunk_start = now
            if self.bar is not None:
                if condition not in self.tasks:
                    self.tasks[condition] = self.bar.add_task(condition, total=total)
                self.bar.update(self.tasks[condition], completed=done, description=condition)
            elif not first:
                t0, done0 = self.started[condition]
                self._say(progress_line(condition, done, total, (done - done0) / max(now - t0, 1e-9), "items"))

    def tick(self, requests: int, tokens: int) -> None:
        """Answers and decoded tokens within the current chunk."""
        with self.lock:
            self.answers += requests
            self.tokens += tokens
            if self.bar is not None and self.condition in self.tasks:
                self.bar.update(self.tasks[self.condition], description=self._within())

    def stage(self, message: str) -> None:
        """A slow step began: said at once, as a line of its own."""
        with self.lock:
            self._say(message)

    def _within(self) -> str:
        seconds = time.monotonic() - self.chunk_start
        if not self.answers and not self.tokens:
            return f"{self.condition} (in this chunk): waiting for the first answer, {_clock(seconds)}"
        rate = f", {self.tokens / max(seconds, 1e-9):.1f} tokens/s" if self.tokens else ""
        return (f"{self.condition} (in this chunk): {self.answers} answered, {self.tokens:,} tokens decoded{rate}, "
                f"{_clock(seconds)}")

    def _heartbeat(self) -> None:
        while not self.stop.wait(0.5):
            with self.lock:
                if self.bar is None and self.condition and time.monotonic() - self.last_said >= QUIET:
                    self._say(f"{self._within()} ({self.done}/{self.total} items before it)")
