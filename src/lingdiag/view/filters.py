"""Which records an items page shows: a condition, a tag, a language, an outcome (``unparsed``,
``unfinished`` and ``failed`` included), fragile decisions only, and text searched in prompts, outputs,
labels and the item id. Records are matched as they stream from disk; a search first skips lines whose
raw bytes cannot hold the text, so most lines are never parsed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lingdiag.records import LANGUAGE, ItemRecord, record_text
from lingdiag.report.browser import OUTCOMES, outcome
from lingdiag.view import index
from lingdiag.view.index import Offsets

FRAGILE = "fragile"
"""The outcome filter's extra value: a reduced-precision decision within its noise bound."""


@dataclass(frozen=True, slots=True)
class Filter:
    """The filters of an items page; empty strings match everything."""

    condition: str = ""
    tag: str = ""
    """``name=value``."""
    language: str = ""
    outcome: str = ""
    """One of ``report.browser.OUTCOMES``, or ``fragile``."""
    text: str = ""

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Filter:
        """From a page's query string (unknown keys ignored)."""
        return cls(**{k: query.get(k, "").strip()[:500] for k in ("condition", "tag", "language", "outcome", "text")})

    def query(self) -> dict[str, str]:
        """The filters set, for links."""
        return {k: getattr(self, k) for k in ("condition", "tag", "language", "outcome", "text") if getattr(self, k)}

    def _raw_may_match(self, raw: bytes) -> bool:
        # JSON keeps text as written except for escapes; a needle without characters JSON escapes
        # must appear in the line's bytes (lowercased) if it appears in any of its texts.
        needle = self.text.lower()
        if not needle or any(c in needle for c in '"\\[]') or any(ord(c) < 32 for c in needle) or not needle.isascii():
            return True
        return needle.encode() in raw.lower()

    def matches(self, r: ItemRecord) -> bool:
        """Whether record ``r`` passes every filter set."""
        if self.condition and r.condition != self.condition:
            return False
        if self.tag:
            name, _, value = self.tag.partition("=")
            if str(r.tags.get(name, "\0")) != value:
                return False
        if self.language and str(r.tags.get(LANGUAGE, "")) != self.language:
            return False
        if self.outcome == FRAGILE:
            if not (r.decision and r.decision.get("fragile")):
                return False
        elif self.outcome and outcome(r) != self.outcome:
            return False
        if self.text:
            needle = self.text.lower()
            texts = (r.item_id, r.label, r.gold or "", record_text(r.prompts), record_text(r.outputs), r.error or "")
            return any(needle in t.lower() for t in texts)
        return True

    def active(self) -> bool:
        """Whether any filter is set."""
        return bool(self.query())

    def scan(self, offsets: Offsets, start: int = 0) -> Iterator[tuple[int, ItemRecord]]:
        """Matching records from line ``start`` on, with their line numbers, streamed from disk."""
        for k, raw in index.lines(offsets, start):
            if self._raw_may_match(raw):
                r = index.record(offsets, k, raw)
                if self.matches(r):
                    yield k, r


OUTCOME_CHOICES = (*OUTCOMES, FRAGILE)
"""What the outcome filter offers."""
