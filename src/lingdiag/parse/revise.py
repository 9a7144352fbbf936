"""Revisions: the answer a careful reader takes when an answer revises itself.

An answer that commits to a label and then opens a revision (``True. Actually, False.``,
``… Wait — on reflection, the answer is Unknown.``, ``Initial answer: True … Final answer: False``)
is superseded by what the revision commits to: the reader reads the text from the last revision on
(everything before it blanked, so positions stay), with every check of the refuse stage. A revision
that is itself doubted, questioned, hedged or undone (``Actually, maybe False``, ``Actually… no
wait, I take that back``) commits to nothing; one that commits to nothing takes the answer back
(``True. Actually, hmm.`` is ``retracted``).

Where a revision begins (``revision_start``):

- after a word of the language's ``revisions`` (``actually``, ``wait``, ``on reflection``, ``其实``)
  that follows a commitment: a single-word one only where it opens its clause (``He actually
  finished`` revises nothing);
- at the first commitment of a later sentence than a draft's (``drafts``: ``initial answer``,
  ``at first``): the draft is superseded by the next answer given.

The last such place wins; the label of the last commitment before it is the one superseded.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from lingdiag.parse.locate import Commitment
from lingdiag.parse.scan import UNSPACED, Scan, Token


@dataclass(frozen=True, slots=True)
class Revision:
    """Where an answer's last revision begins, and what it supersedes."""

    start: int
    """Where the text the revision is read from begins."""
    superseded: str
    """The label of the last commitment before it."""


def revision_start(s: Scan, found: list[Commitment]) -> Revision | None:
    """The last revision of ``s`` after one of the commitments ``found`` (in text order), or None."""
    if not found:
        return None
    first = found[0].mention.start
    places = [t.start for t in s.of_kind("revisions") if t.start > first and _opens(s, t)]
    starts = [c.mention.start for c in found]
    for draft in s.of_kind("drafts"):
        _, draft_end = s.sentence(draft.end)
        k, later = bisect_left(starts, draft.start), bisect_left(starts, draft_end)
        if k < later < len(found):  # the draft commits in its sentence, and an answer follows
            places.append(max(found[later].start, draft_end))
    if not places:
        return None
    place = max(places)
    k = bisect_left([c.mention.end for c in found], place + 1)  # commitments ending before the revision
    return Revision(place, found[k - 1].label) if k else None


def _opens(s: Scan, t: Token) -> bool:
    """Whether the revision word ``t`` opens a revision: a phrase, a word in a script without spaces,
    or a word opening its clause (``Actually, …``; not ``he actually finished``).
    """
    if " " in s.text[t.start:t.end] or UNSPACED.match(s.text[t.start]):
        return True
    return not s.text[s.clause(t.start)[0]:t.start].strip(" \t\"'")


def revised(s: Scan, start: int) -> Scan:
    """``s`` read from ``start`` on: the text before blanked (positions kept), its tokens dropped."""
    text = " " * start + s.text[start:]
    return Scan(text, tuple(t for t in s.tokens if t.start >= start))
