"""Item frequency from its words, where no per-row frequency file exists (``--lexical-frequency``).

An item's lexical frequency is the mean, over the content lemmas of both halves, of either the
lemma's Zipf frequency in ``wordfreq`` (log10 of occurrences per billion words, its large
multi-source English list; the ``audit`` extra) or the number of units of the user's corpus
that hold the lemma. Items are binned at the quartiles like rows of a frequency file
(``frequency.quartile_bins``), and class against bin is tested the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lingdiag.audit.association import Counts
from lingdiag.audit.frequency import BINS, BalanceTest, balance_test, quartile_bins
from lingdiag.errors import ConfigError, MissingDependency


@dataclass(frozen=True, slots=True)
class LexicalFrequency:
    """Class counts per lexical-frequency bin of items."""

    source: str
    """``wordfreq`` or ``corpus``."""
    quartiles: tuple[float, float, float]
    items: Mapping[str, Mapping[str, int]]
    """bin → class → items."""
    test: BalanceTest
    unscored: int
    """Items without a content lemma."""


def _wordfreq(_counts: Counts | None) -> Callable[[str], float]:
    try:
        from wordfreq import zipf_frequency
    except ImportError as e:
        raise MissingDependency("--lexical-frequency wordfreq", "audit", ["wordfreq"]) from e
    return lambda lemma: float(zipf_frequency(lemma, "en"))


def _corpus(counts: Counts | None) -> Callable[[str], float]:
    if counts is None:
        raise ConfigError("--lexical-frequency corpus needs --corpus or --counts")
    return lambda lemma: float(counts.unigrams.get(lemma, 0))


LEXICAL_SOURCES: dict[str, Callable[[Counts | None], Callable[[str], float]]] = {
    "wordfreq": _wordfreq, "corpus": _corpus}


def lexical_frequency(source: str, lemmas: Sequence[Sequence[str]], labels: Sequence[str],
                      counts: Counts | None) -> LexicalFrequency:
    """Bin items by the mean frequency of their content ``lemmas`` (both halves together)."""
    if source not in LEXICAL_SOURCES:
        from lingdiag.errors import UnknownNameError

        raise UnknownNameError("lexical frequency source", source, LEXICAL_SOURCES)
    freq = LEXICAL_SOURCES[source](counts)
    scored = [(sum(map(freq, ls)) / len(ls), lab) for ls, lab in zip(lemmas, labels, strict=True) if ls]
    if not scored:
        raise ConfigError("no item has a content word to measure")
    quartiles, bins = quartile_bins([s for s, _ in scored])
    table = {b: dict.fromkeys(sorted(set(labels)), 0) for b in BINS}
    for b, (_, lab) in zip(bins, scored, strict=True):
        table[b][lab] += 1
    return LexicalFrequency(source, quartiles, table, balance_test(table), len(lemmas) - len(scored))
