"""Construction templates: a premise with annotated slots → templatic NLI hypotheses.

§4.1-4.2 of "Beyond Memorization": a hypothesis is ``h = H_{C,L}(p)``, a template per
construction ``C`` and label ``L`` applied to the slots of premise ``p`` (Table 8 for the
eight Exp 1 constructions; §5.2 and Table 10 for the five Exp 2 ones). The templates are
data (``data/cxnli_templates.yaml``); verb forms come from lemminflect, never from
hand-written suffix rules. A slots file (CSV or JSON) gives, per premise, its construction
and slot fillers, and optionally a hand-written ``neutral`` hypothesis, since templates
only yield entailments and contradictions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import DatasetError
from lingdiag.io.atomic import write_atomic
from lingdiag.io.tabular import read_json, read_table, write_csv
from lingdiag.prompts.morphology import conjugate, inflect, is_plural
from lingdiag.suites.cxnli.data import CONSTRUCTIONS, LABELS, Triple, canonical

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_FORMS = {"ing": "VBG", "past": "VBD", "pp": "VBN", "lemma": "VB"}
_SUBJECT_OF = {"me": "I", "him": "he", "her": "she", "us": "we", "them": "they"}
_OBJECT_OF = {v.lower(): k for k, v in _SUBJECT_OF.items()} | {"it": "it", "you": "you"}
# Closed-class words that are capitalised only because they start the premise.
_LOWER_MID = {"a", "an", "the", "this", "that", "these", "those", "he", "she", "we", "they", "it", "my", "his",
              "her", "our", "their", "its", "your", "some", "any", "other", "such", "one", "all", "each", "every"}


@dataclass(frozen=True, slots=True)
class Template:
    """The hypothesis templates of one construction."""

    construction: str
    form: str
    """The paper's construction template, e.g. ``[SBJ [V OBJ AP]VP]``."""
    slots: tuple[str, ...]
    """Required slots, each a span of the premise."""
    clauses: tuple[str, ...] = ()
    """Required free-text slots (paraphrased propositions)."""
    defaults: Mapping[str, str] = field(default_factory=dict)
    """Optional slots and the template filling them when absent."""
    hypotheses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Label (``entailment``/``contradiction``) → templates."""


@dataclass(frozen=True, slots=True)
class SlotRow:
    """One annotated premise from a slots file."""

    source: str
    """The file it came from (for error messages)."""
    row: int
    """Line number (CSV, header is 1) or 1-based position (JSON)."""
    construction: str
    premise: str
    slots: Mapping[str, str]
    neutral: str = ""
    """A hand-written neutral hypothesis, if any."""


def default_templates() -> Path:
    """The packaged templates file."""
    return Path(str(files("lingdiag.suites.cxnli").joinpath("templates.yaml")))


@dataclass(frozen=True, slots=True)
class TemplateSet:
    """All construction templates plus the comparative polarity list."""

    templates: Mapping[str, Template]
    negative_comparatives: frozenset[str]


def _check_placeholders(t: Template, text: str, path: Path) -> None:
    names = set(t.slots) | set(t.clauses) | set(t.defaults)
    for inner in _PLACEHOLDER.findall(text):
        fn, at, args = inner.partition("@")
        refs = [a.strip() for a in args.split(",")] if at else [inner.partition(":")[0]]
        if not at and ":" in inner and inner.partition(":")[2] not in _FORMS:
            raise DatasetError(f"{t.construction}: unknown verb form in {{{inner}}}; use one of {', '.join(_FORMS)}",
                               path=path)
        if at and fn in _FUNCTIONS and len(refs) != _FUNCTIONS[fn][0]:
            raise DatasetError(f"{t.construction}: {{{inner}}} takes {_FUNCTIONS[fn][0]} slot(s)", path=path)
        for ref in refs:
            if ref not in names:
                raise DatasetError(f"{t.construction}: {{{inner}}} refers to {ref!r}, which is not a slot, "
                                   f"clause or default of this construction", path=path)


def load_templates(path: Path | None = None) -> TemplateSet:
    """Read and validate a templates file (the packaged one by default).

    Args:
        path: A YAML file shaped like ``data/cxnli_templates.yaml``.

    Returns:
        The templates of every construction in the file.
    """
    path = Path(path or default_templates())
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise DatasetError(f"cannot read templates: {e}", path=path) from e
    if not isinstance(data, dict) or not isinstance(data.get("constructions"), dict):
        raise DatasetError("expected a mapping with a 'constructions' mapping", path=path)
    out = {}
    for name, spec in data["constructions"].items():
        cxn = canonical(str(name))
        if cxn is None or cxn not in CONSTRUCTIONS:
            raise DatasetError(f"unknown construction {name!r}; known: {', '.join(sorted(CONSTRUCTIONS))}", path=path)
        hyps = {lab: tuple(spec.get(lab) or ()) for lab in ("entailment", "contradiction")}
        t = Template(cxn, str(spec.get("form", "")), tuple(spec.get("slots") or ()), tuple(spec.get("clauses") or ()),
                     dict(spec.get("defaults") or {}), hyps)
        if not any(hyps.values()):
            raise DatasetError(f"{cxn}: no entailment or contradiction templates", path=path)
        for text in [*t.defaults.values(), *(x for v in hyps.values() for x in v)]:
            _check_placeholders(t, text, path)
        out[cxn] = t
    negatives = frozenset(w.lower() for w in data.get("negative_comparatives") or ())
    return TemplateSet(out, negatives)


def _object_pronoun(np: str) -> str:
    low = np.strip().lower()
    if low in _OBJECT_OF:
        return _OBJECT_OF[low]
    if low in _SUBJECT_OF:
        return low
    return "them" if is_plural(np) else "it"


def _subject_form(np: str) -> str:
    return _SUBJECT_OF.get(np.strip().lower(), np)


# -- filling templates -----------------------------------------------------------------


def _mid(text: str) -> str:
    """Lowercase a sentence-initial closed-class word when the slot lands mid-sentence."""
    first, sep, rest = text.partition(" ")
    return first.lower() + sep + rest if first.lower() in _LOWER_MID else text


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"\.\.$", ".", text)
    return text[:1].upper() + text[1:]


def _polarity(comparative: str, negatives: frozenset[str]) -> int:
    return -1 if comparative.split()[0].lower() in negatives else 1


def _correlation(sign: int) -> Callable[[list[str], frozenset[str]], str]:
    def corr(args: list[str], negatives: frozenset[str]) -> str:
        product = sign * _polarity(args[0], negatives) * _polarity(args[1], negatives)
        return "positively" if product > 0 else "negatively"

    return corr


_FUNCTIONS: dict[str, tuple[int, Callable[[list[str], frozenset[str]], str]]] = {
    "it": (1, lambda a, _: _object_pronoun(a[0])),
    "subj": (1, lambda a, _: _subject_form(a[0])),
    "corr": (2, _correlation(1)),
    "anticorr": (2, _correlation(-1)),
}
"""Placeholder functions ``{name@SLOT,...}``: (number of slot arguments, function)."""


class _Filler:
    """Fills one template for one slots row; errors name the row and the slot."""

    def __init__(self, template: Template, row: SlotRow, negatives: frozenset[str]) -> None:
        self.t, self.row, self.negatives = template, row, negatives

    def fail(self, message: str, slot: str) -> DatasetError:
        return DatasetError(message, path=self.row.source, row=self.row.row, field=slot)

    def slot(self, name: str) -> str:
        value = self.row.slots.get(name, "")
        if value:
            return value
        if name in self.t.defaults:
            return self.fill(self.t.defaults[name], sentence=False)
        raise self.fail(f"{self.t.construction} needs slot {name}", name)

    def placeholder(self, inner: str, at_start: bool) -> str:
        if ("@" in inner or ":" in inner) and self.row.slots.get(inner):
            return self.row.slots[inner]  # an explicit override column
        fn, at, args = inner.partition("@")
        try:
            if at:
                values = [self.slot(a.strip()) for a in args.split(",")]
                if fn in _FUNCTIONS:
                    return _FUNCTIONS[fn][1](values, self.negatives)
                return conjugate(fn, values[0], values[1] if len(values) > 1 else None)
            name, colon, form = inner.partition(":")
            if colon:
                return inflect(self.slot(name), _FORMS[form])
        except ValueError as e:
            raise self.fail(f"{e}; give the form in a column named {inner!r}", inner) from None
        value = self.slot(inner)
        return value if at_start else _mid(value)

    def fill(self, template: str, sentence: bool = True) -> str:
        def sub(m: re.Match[str]) -> str:
            return self.placeholder(m.group(1), at_start=sentence and m.start() == 0)

        text = _PLACEHOLDER.sub(sub, template)
        return _finish(text) if sentence else text


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("’", "'").replace("`", "'")).strip().lower()


def generate(rows: Sequence[SlotRow], templates: TemplateSet | None = None) -> list[Triple]:
    """Hypotheses for every annotated premise.

    Args:
        rows: From :func:`read_slots`.
        templates: From :func:`load_templates` (the packaged ones by default).

    Returns:
        Triples numbered from 1 in row order: per premise, the entailment templates, the
        hand-written neutral hypothesis (if given), then the contradiction templates. Each
        triple's ``columns`` record the template (or ``hand-written``) and the source row.
    """
    ts = templates or load_templates()
    out: list[Triple] = []
    for row in rows:
        if row.construction not in ts.templates:
            raise DatasetError(f"no templates for construction {row.construction!r}", path=row.source, row=row.row,
                               field="construction")
        t = ts.templates[row.construction]
        filler = _Filler(t, row, ts.negative_comparatives)
        for name in t.slots:
            value = filler.slot(name)
            if _norm(value) not in _norm(row.premise):
                raise filler.fail(f"slot {name}={value!r} does not occur in the premise {row.premise!r}", name)
        for name in t.clauses:
            filler.slot(name)
        made: list[tuple[str, str, str]] = [("entailment", filler.fill(x), x) for x in t.hypotheses["entailment"]]
        if row.neutral:
            made.append(("neutral", row.neutral, "hand-written"))
        made += [("contradiction", filler.fill(x), x) for x in t.hypotheses["contradiction"]]
        for label, hyp, src in made:
            out.append(Triple(str(len(out) + 1), row.construction, row.premise, hyp, label, row.row,
                              {"Template": src, "Source Row": str(row.row)}))
    return out


# -- slots files -----------------------------------------------------------------------


def _slot_row(raw: Mapping[str, Any], source: str, n: int) -> SlotRow:
    data = {str(k).strip(): ("" if v is None else str(v).strip()) for k, v in raw.items() if k is not None}
    nested = raw.get("slots")
    if isinstance(nested, Mapping):
        data.pop("slots")
        data.update({str(k): str(v).strip() for k, v in nested.items() if v is not None})
    for key in ("construction", "premise"):
        if not data.get(key):
            raise DatasetError("missing or empty", path=source, row=n, field=key)
    cxn = canonical(data["construction"])
    if cxn is None or cxn not in CONSTRUCTIONS:
        raise DatasetError(f"unknown construction {data['construction']!r}; known: {', '.join(sorted(CONSTRUCTIONS))}",
                           path=source, row=n, field="construction")
    slots = {k: v for k, v in data.items() if k not in ("construction", "premise", "neutral", "id") and v}
    return SlotRow(source, n, cxn, data["premise"], slots, data.get("neutral", ""))


def read_slots(path: Path | str) -> list[SlotRow]:
    """Read a slots file: CSV/TSV with a header, or a JSON list of objects.

    Columns/keys: ``construction``, ``premise``, the construction's slots (``SBJ``, ``V``,
    ``OBJ``, ...; in JSON optionally nested under ``slots``), optional ``neutral`` and ``id``,
    and optional override columns named like placeholders (``V:ing``).
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
            raise DatasetError("expected a JSON list of objects", path=path)
        return [_slot_row(x, str(path), n) for n, x in enumerate(data, 1)]
    _, rows = read_table(path)
    return [_slot_row(row, str(path), n) for n, row in enumerate(rows, 2)]


def write_triples(path: Path | str, triples: Sequence[Triple]) -> None:
    """Write triples in the official three-row layout (TSV/CSV by suffix) or as JSON.

    The TSV/CSV output loads with :func:`lingdiag.suites.cxnli.data.read_triples` and runs
    with ``lingdiag run cxnli --dataset FILE``.
    """
    path = Path(path)
    extra = sorted({k for t in triples for k in t.columns})
    if path.suffix.lower() == ".json":
        rows = [{"number": t.number, "construction": t.construction, "premise": t.premise,
                 "hypothesis": t.hypothesis, "label": t.label, **t.columns} for t in triples]
        write_atomic(path, json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return

    def lines() -> Iterator[list[object]]:
        for t in triples:
            code = LABELS.index(t.label)
            yield [t.construction, t.number, "premise", t.premise, *(t.columns.get(k, "") for k in extra)]
            yield ["", t.number, "hypothesis", t.hypothesis, *([""] * len(extra))]
            yield ["", t.number, "relation", f"{code} ({t.label})", *([""] * len(extra))]

    write_csv(path, ["CxN Type", "Number", "P/H/R", "Annotation Targets - Gold Standard Relation", *extra], lines(),
              delimiter="," if path.suffix.lower() == ".csv" else "\t", lineterminator="\n")
