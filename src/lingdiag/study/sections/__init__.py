"""The study report's sections, registered like the run report's: a section is one module of this package
that registers one :class:`StudySection` in :data:`STUDY_SECTIONS` (:func:`register`); the report draws
them by ``order``, after its findings: ``grid`` (10), ``accuracy`` (20), ``curves`` (30), ``comparisons``
(40), ``adjacent`` (50), ``mixed`` (60), ``items`` (70), ``irt`` (80), ``agreement`` (90), ``competence``
(100), ``failures`` (110).

A section draws from the :class:`~lingdiag.study.loaded.Study` (the runs' summaries and what is computed
once of them) a :class:`Drawn`: its Markdown, its figures, its own HTML where it has links, and the
findings it supports, which the report says first. The helpers here name runs and numbers the same way in
every section.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lingdiag.figures import Figure
from lingdiag.registry import Registry, import_package
from lingdiag.study.across import Accuracy, Missing

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


@dataclass(frozen=True)
class Drawn:
    """A section's Markdown, its figures and the findings it supports (each one sentence)."""

    text: str
    figures: Sequence[Figure] = ()
    found: Sequence[str] = ()
    html: str = ""
    """The section's own HTML (every outside text escaped) where it is more than its markdown (links)."""


@dataclass(frozen=True)
class StudySection:
    """One section of the study report: its anchor (its name in :data:`STUDY_SECTIONS`), its title, its place
    (``order``, low first) and how it is drawn.
    """

    anchor: str
    title: str
    order: int
    draw: Callable[[Study], Drawn]


STUDY_SECTIONS: Registry[StudySection] = Registry("study report section")


def register(section: StudySection) -> StudySection:
    """Register ``section`` under its anchor (a module of this package calls it once)."""
    return STUDY_SECTIONS.register(section.anchor)(section)


def ordered() -> list[StudySection]:
    """Every registered study section, in report order."""
    import_package(__name__)  # every module of this package is a section
    return sorted((STUDY_SECTIONS.get(name) for name in STUDY_SECTIONS.names()), key=lambda s: s.order)


NAMED = 10
"""Runs named in one sentence at most; the rest are counted (the tables and the grid list every one)."""


def some(names: Sequence[str], shown: int = NAMED) -> str:
    """``names`` joined, the first ``shown`` of them (:data:`NAMED` by default) and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def size(n: float | None) -> str:
    """A model's parameters as the tables print them (``135M``, ``1.5B``; empty where unknown)."""
    return "" if n is None else (f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M")


def ci(a: Accuracy) -> str:
    """An accuracy's 95% interval as the tables print it (``–`` with nothing graded)."""
    lo, hi = a.ci95
    return "–" if math.isnan(lo) else f"[{lo:.3f}, {hi:.3f}]"


def missing_line(missing: Sequence[Missing]) -> str:
    """The runs not measured, each with its size where the study gives one and its state."""
    return some([f"{g.label}{f' {size(g.entry.model.n_params)}' if g.entry.model.n_params else ''} × "
                 f"{g.entry.suite} ({g.why})" for g in missing])
