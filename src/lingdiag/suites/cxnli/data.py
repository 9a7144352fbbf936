"""CxNLI data ("Beyond Memorization", Scivetti et al.): triples spread over three rows.

The official files (§4.1, §5.1, Appendix B) hold one NLI triple as three consecutive rows
sharing ``Number``: ``premise``, ``hypothesis``, ``relation``. The construction name
(``CxN Type``) is only on the first row, the relation cell reads ``1 (neutral)`` (the SNLI
example files write the bare code), some files carry extra columns (``Original Agr?``,
``Changed?``) and a byte-order mark. The Exp 2 test file names each item by the Exp 1
construction it is syntactically identical to (``resultative`` for a depictive premise);
its items are tagged with the Exp 2 construction of Table 10 and keep the Exp 1 name as
``schema``.

Counts: Table 7 reports 435 (Exp 1) and 99 (Exp 2) triples. The pinned release holds 390
well-formed, distinct Exp 1 test triples (130 premises × 3 relations) plus 72 in-context
triples (462 in all, none shared with the test file), and 100 well-formed, distinct Exp 2
test triples; neither 435 nor 99 can be derived from the released files, so the loaders
report what the files hold.
"""

from __future__ import annotations

import _csv
import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_text, restore, sniff_delimiter
from lingdiag.records import Item

LABELS = ("entailment", "neutral", "contradiction")
"""Gold labels; the paper's numeric coding is the index (Appendix E, Table 11)."""
CODES = {str(k): label for k, label in enumerate(LABELS)}
NONE = "none"
"""Construction key of generic (SNLI) in-context examples."""


@dataclass(frozen=True, slots=True)
class Construction:
    """One construction of Table 3 (Exp 1) or Table 5/10 (Exp 2)."""

    name: str
    """Canonical name, e.g. ``resultative`` or ``depictive``."""
    exp: str
    """``1`` (entrenched, CxNLI) or ``2`` (syntactically identical, CxNLI-Distinction)."""
    schema: str
    """The Exp 1 construction sharing this form (itself for Exp 1)."""
    kind: str
    """``argument-structure`` (no fixed words) or ``phrasal`` (fixed words), §3."""
    title: str
    """The paper's spelling."""


CONSTRUCTIONS: dict[str, Construction] = {c.name: c for c in (
    Construction("causative-with", "1", "causative-with", "argument-structure", "Causative-With"),
    Construction("caused-motion", "1", "caused-motion", "argument-structure", "Caused-Motion"),
    Construction("comparative-correlative", "1", "comparative-correlative", "phrasal", "Comparative-Correlative"),
    Construction("conative", "1", "conative", "argument-structure", "Conative"),
    Construction("intransitive-motion", "1", "intransitive-motion", "argument-structure", "Intransitive Motion"),
    Construction("let-alone", "1", "let-alone", "phrasal", "Let-Alone"),
    Construction("resultative", "1", "resultative", "argument-structure", "Resultative"),
    Construction("way-manner", "1", "way-manner", "phrasal", "Way-Manner"),
    Construction("depictive", "2", "resultative", "argument-structure", "Depictive"),
    Construction("intransitive-at", "2", "conative", "argument-structure", "Intransitive+at"),
    Construction("ditransitive-np-pp", "2", "caused-motion", "argument-structure", "Ditransitive V+NP+PP"),
    Construction("intransitive-to", "2", "intransitive-motion", "argument-structure", "Intransitive+to"),
    Construction("transitive-with", "2", "causative-with", "argument-structure", "Transitive+with"),
)}
COUNTERPART = {c.schema: c.name for c in CONSTRUCTIONS.values() if c.exp == "2"}
"""Exp 1 construction → its syntactically identical Exp 2 construction (Table 5)."""

# Spellings found in the released files and the authors' scripts.
_ALIASES = {"causative-with-cxn": "causative-with", "causative - with": "causative-with",
            "intransitive motion": "intransitive-motion", "none": NONE}

_COLUMNS = {"cxn type": "construction", "number": "number", "p/h/r": "role",
            "annotation targets - gold standard relation": "text"}
_ROLES = ("premise", "hypothesis", "relation")
_RELATION = re.compile(r"^\s*([012])\s*(?:\(\s*([a-z]+)\s*\))?\s*$", re.I)


def canonical(name: str) -> str | None:
    """The canonical construction name for a file spelling, or None if unknown."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    return key if key in CONSTRUCTIONS or key == NONE else None


@dataclass(frozen=True, slots=True)
class Triple:
    """One premise/hypothesis/relation triple as read from a file."""

    number: str
    construction: str
    """Canonical construction name (``none`` for generic SNLI examples)."""
    premise: str
    hypothesis: str
    label: str
    """One of ``LABELS``."""
    line: int
    """Line of the triple's first row in its file (the header is line 1)."""
    columns: Mapping[str, str] = field(default_factory=dict)
    """Extra columns of the first row (e.g. ``Original Agr?``), non-empty ones only."""
    raw: tuple[str, ...] = field(default=(), compare=False)
    """The cells ``CxN Type``, premise, hypothesis and relation exactly as the file has them
    (unstripped; the authors' scripts use them so), or ``()`` for generated triples.
    """


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    end: int
    cells: Mapping[str, str]
    raw: Mapping[str, str] = field(default_factory=dict)


def _read_rows(path: Path) -> tuple[list[str], list[_Row]]:
    text = read_text(path)
    reader = csv.reader(io.StringIO(text), delimiter=sniff_delimiter(text.split("\n", 1)[0]))
    try:
        return _rows_of(path, reader)
    except csv.Error as e:  # e.g. a cell longer than csv.field_size_limit()
        raise DatasetError(f"not a readable CSV/TSV row: {e}", path=path, row=reader.line_num) from None


def _rows_of(path: Path, reader: _csv.Reader) -> tuple[list[str], list[_Row]]:
    try:
        header = [h.replace("\ufeff", "").strip() for h in next(reader)]
    except StopIteration:
        raise DatasetError("empty file (expected a header row)", path=path) from None
    names = {h.lower(): k for k, h in enumerate(header)}
    missing = [c for c in _COLUMNS if c not in names]
    if missing:
        raise DatasetError(f"missing column(s) {', '.join(map(repr, missing))}; header is {header}", path=path, row=1)
    rows, prev = [], reader.line_num
    for cells in reader:
        start, prev = prev + 1, reader.line_num
        clean = [restore(c.replace("\ufeff", "").strip()) for c in cells]
        if not any(clean):
            continue  # blank separator lines occur inside released files
        clean += [""] * (len(header) - len(clean))
        named = {_COLUMNS.get(h.lower(), h): clean[k] for k, h in enumerate(header)}
        if len(clean) > len(header) and any(clean[len(header):]):
            named["_overflow"] = "\t".join(clean[len(header):])
        raw = {_COLUMNS[h.lower()]: cells[k] if k < len(cells) else "" for k, h in enumerate(header)
               if h.lower() in _COLUMNS}
        rows.append(_Row(start, prev, named, raw))
    return header, rows


def _groups(rows: Sequence[_Row]) -> list[list[_Row]]:
    """Consecutive rows sharing a ``Number``."""
    out: list[list[_Row]] = []
    for row in rows:
        if out and out[-1][0].cells["number"] == row.cells["number"]:
            out[-1].append(row)
        else:
            out.append([row])
    return out


def _role(cell: str) -> str:
    key = cell.strip().lower()
    return "premise" if key.startswith("premi") else key  # "Premi" is a typo in the released files


def _triple(group: Sequence[_Row], extra: Sequence[str]) -> Triple | str:
    """The triple of one ``Number`` group, or what is wrong with it."""
    roles = [_role(r.cells["role"]) for r in group]
    if tuple(roles) != _ROLES:
        return f"expected 3 rows premise/hypothesis/relation, found {len(group)}: {'/'.join(roles) or '-'}"
    premise, hypothesis, relation = group
    problems = []
    if "_overflow" in premise.cells or "_overflow" in hypothesis.cells or "_overflow" in relation.cells:
        problems.append("more cells than header columns")
    raw_cxn = premise.cells["construction"]
    cxn = canonical(raw_cxn) if raw_cxn else None
    if not raw_cxn:
        problems.append("no construction (CxN Type) on the premise row")
    elif cxn is None:
        problems.append(f"unknown construction {raw_cxn!r}; known: {', '.join(sorted(CONSTRUCTIONS))}, None")
    for r in (hypothesis, relation):
        if r.cells["construction"] and canonical(r.cells["construction"]) != cxn:
            problems.append(f"line {r.line} names another construction {r.cells['construction']!r}")
    for r, what in ((premise, "premise"), (hypothesis, "hypothesis")):
        if not r.cells["text"]:
            problems.append(f"empty {what} text")
    m = _RELATION.match(relation.cells["text"])
    label = ""
    if not m:
        problems.append(f"relation {relation.cells['text']!r} is not 0, 1 or 2 (optionally with its name)")
    else:
        label = CODES[m.group(1)]
        if m.group(2) and m.group(2).lower() != label:
            problems.append(f"relation {relation.cells['text']!r}: code {m.group(1)} means {label}")
    if problems:
        return "; ".join(problems)
    assert cxn is not None
    columns = {k: premise.cells[k] for k in extra if premise.cells.get(k)}
    raw = (premise.raw["construction"], premise.raw["text"], hypothesis.raw["text"], relation.raw["text"])
    return Triple(premise.cells["number"], cxn, premise.cells["text"], hypothesis.cells["text"], label,
                  premise.line, columns, raw)


def read_triples(path: Path | str) -> list[Triple]:
    """Read and validate a CxNLI-format file (TSV or CSV).

    Args:
        path: A file laid out like the official releases.

    Returns:
        The triples in file order.

    Raises:
        DatasetError: Listing every malformed triple with its line numbers and ``Number``.
    """
    path = Path(path)
    header, rows = _read_rows(path)
    extra = [h for h in header if h.lower() not in _COLUMNS]
    triples: list[Triple] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for group in _groups(rows):
        number = group[0].cells["number"]
        where = f"lines {group[0].line}-{group[-1].end} (Number {number or '<empty>'})"
        result = _triple(group, extra)
        if isinstance(result, str):
            problems.append(f"{where}: {result}")
            continue
        if not number:
            problems.append(f"{where}: empty Number")
        elif number in seen:
            problems.append(f"{where}: Number {number} already used at line {seen[number]}")
        else:
            seen[number] = group[0].line
            triples.append(result)
    if problems:
        raise DatasetError(f"{len(problems)} malformed triple(s):\n  " + "\n  ".join(problems), path=path)
    return triples


def item_construction(triple: Triple, exp: str | None) -> Construction:
    """The construction an item is tagged with.

    Args:
        triple: A triple read from a test file.
        exp: ``2`` for a CxNLI-Distinction file (Exp 1 names map to their Exp 2 counterpart),
            ``1`` for a CxNLI file, None to infer from the construction name.

    Returns:
        The construction (Exp 2 items get the Table 10 construction).
    """
    if triple.construction == NONE:
        raise DatasetError("generic (None) examples cannot be test items", row=triple.line, field="CxN Type")
    cxn = CONSTRUCTIONS[triple.construction]
    if exp == "2" and cxn.exp == "1":
        if cxn.name not in COUNTERPART:
            raise DatasetError(f"{cxn.name} has no Exp 2 counterpart (Table 5)", row=triple.line, field="CxN Type")
        return CONSTRUCTIONS[COUNTERPART[cxn.name]]
    if exp == "1" and cxn.exp == "2":
        raise DatasetError(f"{cxn.name} is an Exp 2 construction in an Exp 1 file", row=triple.line,
                           field="CxN Type")
    return cxn


def to_items(triples: Iterable[Triple], exp: str | None, prefix: str = "") -> list[Item]:
    """Test items from triples.

    Args:
        triples: From :func:`read_triples`.
        exp: See :func:`item_construction`.
        prefix: Prepended to ids (ids are ``e<exp>-<Number>``).

    Returns:
        Items with fields ``premise``/``hypothesis``, gold label, and tags ``exp``,
        ``construction``, ``schema``, ``kind``, ``number`` and ``columns``.
    """
    items = []
    for t in triples:
        cxn = item_construction(t, exp)
        items.append(Item(
            id=f"{prefix}e{cxn.exp}-{t.number}", fields={"premise": t.premise, "hypothesis": t.hypothesis},
            gold=t.label, tags={"exp": cxn.exp, "construction": cxn.name, "schema": cxn.schema, "kind": cxn.kind,
                                "number": t.number, "columns": dict(t.columns)}))
    return items


Pool = Mapping[str, tuple[Triple, ...]]
"""In-context examples by construction (``none`` for generic SNLI examples)."""


def to_pool(triples: Iterable[Triple]) -> dict[str, tuple[Triple, ...]]:
    """Group in-context example triples by construction, keeping file order."""
    pool: dict[str, list[Triple]] = {}
    for t in triples:
        pool.setdefault(t.construction, []).append(t)
    return {k: tuple(v) for k, v in pool.items()}


def first_premise(pool: Pool) -> dict[str, tuple[Triple, ...]]:
    """The triples of each construction's first premise (the official 1-example files are
    exactly this subset of the 3-example files).
    """
    return {k: tuple(t for t in v if t.premise == v[0].premise) for k, v in pool.items()}
