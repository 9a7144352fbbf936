"""One audit of a dataset: the typed report ``lingdiag data audit`` prints or writes as JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from lingdiag.audit.association import ItemAssociation, association_scores, count_corpus, read_counts, wanted_pairs
from lingdiag.audit.frequency import FrequencyAudit, frequency_audit
from lingdiag.audit.lemmas import lemmatizer as make_lemmatizer
from lingdiag.audit.lexical import LexicalFrequency, lexical_frequency
from lingdiag.audit.stats import ClassTest, Omnibus, compare_classes
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.records import Item

MEASURES: dict[str, Callable[[ItemAssociation], float | None]] = {"pmi": lambda s: s.pmi, "lmi": lambda s: s.lmi}


@dataclass(frozen=True, slots=True)
class AuditSources:
    """What the audit reads beside the items (each optional)."""

    corpus: Path | None = None
    """Plain text, one unit (sentence or document) per line."""
    counts: Path | None = None
    """A counts file instead of a corpus (see ``association.read_counts``)."""
    frequencies: Path | None = None
    """A per-row frequency file (see ``frequency.read_frequencies``)."""
    lemmatizer: str = "builtin"
    lexical_frequency: str | None = None
    """``wordfreq`` or ``corpus``: bin items by the frequency of their content lemmas."""


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything one audit found."""

    dataset: str
    n_items: int
    class_by: str
    """The tag items are grouped by (``gold`` for the gold label)."""
    classes: Mapping[str, int]
    lemmatizer: str | None = None
    corpus: str | None = None
    corpus_units: int | None = None
    association: Mapping[str, Mapping[str, Mapping[str, float | int | None]]] = field(default_factory=dict)
    """measure → class → n, n_unscored, mean, median."""
    omnibus: Sequence[Omnibus] = ()
    pairs: Sequence[ClassTest] = ()
    frequency: FrequencyAudit | None = None
    lexical: LexicalFrequency | None = None
    items: Sequence[ItemAssociation] = ()

    def to_dict(self, *, items: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; per-item scores only when ``items``."""
        d = asdict(self)
        if not items:
            d.pop("items")
        return d


def class_of(item: Item, tag: str) -> str:
    """The item's class under ``tag`` (``gold``: its gold label, ``none`` where it has none)."""
    value = item.gold if tag == "gold" else item.tags.get(tag)
    return "none" if value is None else str(value)


def _summary(values: Sequence[float | None]) -> dict[str, float | int | None]:
    scored = [v for v in values if v is not None]
    return {"n": len(values), "n_unscored": len(values) - len(scored),
            "mean": float(np.mean(scored)) if scored else None,
            "median": float(np.median(scored)) if scored else None}


def audit(name: str, items: Sequence[Item], halves: tuple[str, str], class_by: str,
          sources: AuditSources) -> AuditReport:
    """Audit ``items``: association between ``halves`` (given a corpus or counts file) and
    frequency bins (given a frequency file), with classes taken from tag ``class_by``.
    """
    if not items:
        raise DatasetError("no items to audit", path=name)
    for f in halves:
        if f not in items[0].fields:
            raise ConfigError(f"items have no field {f!r} (fields: {', '.join(sorted(items[0].fields))})")
    if class_by != "gold" and not any(class_by in it.tags for it in items):
        tags = sorted({t for it in items for t in it.tags})
        raise ConfigError(f"no item has the tag {class_by!r}; tags: gold, {', '.join(tags)}")
    labels = [class_of(it, class_by) for it in items]
    report = AuditReport(name, len(items), class_by, dict(sorted(Counter(labels).items())))
    if sources.corpus and sources.counts:
        raise ConfigError("give --corpus or --counts, not both")
    if sources.corpus or sources.counts or sources.lexical_frequency:
        report = _with_lemmas(report, items, halves, labels, sources)
    if sources.frequencies:
        keys = [(str(it.fields[halves[0]]).strip(), str(it.fields[halves[1]]).strip()) for it in items]
        report = replace(report, frequency=frequency_audit(keys, labels, sources.frequencies))
    return report


def _with_lemmas(report: AuditReport, items: Sequence[Item], halves: tuple[str, str], labels: Sequence[str],
                 sources: AuditSources) -> AuditReport:
    lem = make_lemmatizer(sources.lemmatizer)
    lemmas = [(lem.lemmas(str(it.fields[halves[0]])), lem.lemmas(str(it.fields[halves[1]]))) for it in items]
    counts = None
    if sources.corpus:
        counts = count_corpus(sources.corpus, lem.lemmas, wanted_pairs(lemmas), {w for a, b in lemmas for w in a + b})
    elif sources.counts:
        counts = read_counts(sources.counts)
    if sources.lexical_frequency:
        lexical = lexical_frequency(sources.lexical_frequency, [[*a, *b] for a, b in lemmas], labels, counts)
        report = replace(report, lemmatizer=lem.name, lexical=lexical)
    if counts is None:
        return report
    scores = [association_scores(it.id, lab, a, b, counts) for it, lab, (a, b) in zip(items, labels, lemmas,
                                                                                        strict=True)]
    association, omnibus, pairs = {}, [], []
    for m, value in MEASURES.items():
        by_class: dict[str, list[float | None]] = {}
        for s in scores:
            by_class.setdefault(s.label, []).append(value(s))
        association[m] = {c: _summary(v) for c, v in sorted(by_class.items())}
        omni, tests = compare_classes(m, {c: [x for x in v if x is not None] for c, v in by_class.items()})
        omnibus += [omni] if omni else []
        pairs += tests
    return replace(report, lemmatizer=lem.name, corpus=counts.source, corpus_units=counts.n,
                    association=association, omnibus=omnibus, pairs=pairs, items=scores)
