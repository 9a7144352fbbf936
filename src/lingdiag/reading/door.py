"""The one door to read runs for numbers: each run's state asked once (``lingdiag.rundir.state``), one named
acceptance rule applied to it, and the accepted runs read (``load_run``, or their summaries), each named
by its place and carrying what keeps its numbers from being final.

Before this door, four readers each decided on their own whether a run counts: a run stopped at 2 of 6
items was compared as if final. Now every reader of numbers passes its runs through :func:`accepted`:

- :data:`FINAL` (the default of ``compare``, the analyses and ``items``): finished, current and every item
  answered. Any other run is refused in one line naming it and its state, before anything is computed.
- :data:`PARTIAL` (``--partial``; ``lingdiag report``, which has always shown every run it can read): every
  readable run, and each one whose numbers are not final is **marked** in what the reader prints
  (:attr:`Accepted.mark`).

A run whose inputs cannot be checked now (a data file that is not there: ``unchecked``) is accepted by both
rules, since its numbers are its own, and marked by both, since no one can say they are current.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import RunError
from lingdiag.rundir import Phase, RunState, run_state


@dataclass(frozen=True, slots=True)
class Acceptance:
    """Which runs a reader prints numbers over."""

    name: str
    reads_all: bool
    """Runs not finished, not current or with failed items are read (and marked); else refused."""


FINAL = Acceptance("final", reads_all=False)
PARTIAL = Acceptance("partial", reads_all=True)
PARTIAL_FLAG = "--partial"
"""The option that asks for :data:`PARTIAL`, named in every refusal."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """A run let through the door."""

    path: Path
    state: RunState
    mark: str | None
    """Why its numbers are not final and current (None: they are): every table printed over it says so."""


def mark(state: RunState) -> str | None:
    """What keeps a run's numbers from being final and current, in a few words; None when nothing does."""
    if state.line is not None:
        return state.line
    if state.failed:
        return f"{state.failed} of {state.planned} items failed; numbers over the answered items only"
    if state.unchecked:
        return f"not checked: {', '.join(Path(u).name for u in state.unchecked)} not found, so it cannot be " \
               "said to be current"
    return None


def accepted(dirs: Sequence[Path], acceptance: Acceptance = FINAL) -> list[Accepted]:
    """Each run of ``dirs`` (a directory given twice is one run) with its state, if ``acceptance`` lets it in.

    Raises:
        RunError: one line per refused run, naming it, its state and how to read it anyway.
    """
    given = {Path(d).resolve(): Path(d) for d in reversed(dirs)}
    out, refused = [], []
    for path in reversed(given.values()):
        state = run_state(path)
        if state.phase in (Phase.ABSENT, Phase.UNREADABLE):
            refused.append(state.problem or f"{path}: not a run directory")
            continue
        why = mark(state)
        if why is not None and not acceptance.reads_all and not state.complete:
            refused.append(f"{path}: {state.status}: {why}; its numbers are not final (pass {PARTIAL_FLAG} to read "
                           "it, marked in every table)")
            continue
        out.append(Accepted(path, state, why))
    if refused:
        raise RunError("\n".join(refused))
    return out


def marks_note(runs: Sequence[Accepted], names: Sequence[str] | None = None) -> str:
    """The lines above a table over ``runs`` naming each marked run and why (empty when none is)."""
    names = names or [str(r.path) for r in runs]
    return "".join(f"**Not final** ({name}): {r.mark}\n\n" for r, name in zip(runs, names, strict=True) if r.mark)
