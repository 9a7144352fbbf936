"""The report's sections, registered like suites and providers: a section is one module of this
package that registers one :class:`Section` in :data:`SECTIONS`; the page shows them by ``order``:
``summary`` (10), ``given`` (a caller's own tables, 20), ``suites`` (one per suite, 30), ``items`` (the
item browser of a static report, 40), ``reading`` (the unparsed answers by reason and a judge
model's readings, 45), ``details`` (counts, intervals, provenance, 50).

The static report (``report --html``) and ``lingdiag view`` draw the same sections through the same
shell (:func:`lingdiag.report.html.shell`), so a section added here appears in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from lingdiag.registry import Registry, import_package
from lingdiag.report.page import Page


@dataclass(frozen=True, slots=True)
class Link:
    """A navigation entry: an anchor and its text (``sub``: indented under the one before)."""

    anchor: str
    text: str
    sub: bool = False


@dataclass(frozen=True, slots=True)
class Fragment:
    """What a section renders: its HTML (every run's text escaped), its navigation entries, and the
    CSP sources of the scripts it carries (none for most).
    """

    html: str
    nav: tuple[Link, ...]
    scripts: tuple[str, ...] = ()


class Section(Protocol):
    """One part of the report page."""

    title: str
    order: int
    """Place on the page, low first (summary 10, tables 20, suites 30, items 40, details 50)."""

    def applies_to(self, page: Page) -> bool:
        """Whether the page shows this section for these runs."""
        ...

    def render(self, page: Page) -> Sequence[Fragment]:
        """The section's fragments (one per suite for the suites' section, one for most)."""
        ...


SECTIONS: Registry[Section] = Registry("report section")
def ordered() -> list[Section]:
    """Every registered section, in page order."""
    import_package(__name__)  # every module of this package is a section
    return sorted((SECTIONS.get(name) for name in SECTIONS.names()), key=lambda s: s.order)


def fragments(page: Page) -> list[Fragment]:
    """The fragments of every section that applies to ``page``, in page order."""
    return [f for s in ordered() if s.applies_to(page) for f in s.render(page)]


def wrap(anchor: str, title: str, inner: str) -> str:
    """A section element with its heading (``title`` is the section's own text, not a run's)."""
    return f'<section id="{anchor}"><h2>{title}</h2>{inner}</section>'
