"""Content lemmas of a text: a small registry of lemmatizers.

ExpliCa kept nouns, verbs and adjectives, PoS-tagged with Stanza (§3.1) and spaCy (§3.3).
``spacy:<pipeline>`` does the same with an installed spaCy pipeline; ``builtin`` (the default,
and the only one where no spaCy pipeline is installed) lower-cases word tokens, drops a
stopword list and maps each word to its lemma with lemminflect (already a dependency),
preferring a verb reading, then noun, then adjective.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from lingdiag.errors import ConfigError, UnknownNameError
from lingdiag.prompts.morphology import lemmas_by_pos

# Function words, auxiliaries and pronouns: what a noun/verb/adjective filter would drop.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be been before being below between both but by
can could did do does doing done down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours yourself yourselves
get got gets getting go went gone goes going let lets make made may might must shall also even still yet
one two three four five six seven eight nine ten first second last next many much every someone something
anyone anything everyone everything nobody nothing
""".split())
CONTENT_POS = ("NOUN", "VERB", "ADJ", "PROPN")
_TOKEN = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")


@dataclass(frozen=True, slots=True)
class Lemmatizer:
    """A named function from text to its content lemmas (in text order, repeats kept)."""

    name: str
    """As given on the command line (``builtin``, ``spacy:en_core_web_sm``); named in the report."""
    lemmas: Callable[[str], list[str]]


def _builtin_lemma(word: str) -> str:
    found = lemmas_by_pos(word)
    for pos in ("VERB", "NOUN", "ADJ"):
        if pos in found:
            return found[pos][0].lower()
    return word


def builtin_lemmas(text: str) -> list[str]:
    """Lower-cased content lemmas: word tokens minus ``STOPWORDS``, lemmatized by lemminflect."""
    words = [w.lower().replace("’", "'") for w in _TOKEN.findall(text)]
    words = [w.split("'")[0] for w in words]  # "man's" → "man", "didn't" → "didn"
    return [lemma for w in words if len(w) > 1 and w not in STOPWORDS
            for lemma in (_builtin_lemma(w),) if lemma not in STOPWORDS]


@cache
def _spacy(model: str) -> Callable[[str], list[str]]:
    try:
        import spacy
    except ImportError as e:
        raise ConfigError(f"--lemmatizer spacy:{model} needs spaCy and that pipeline installed "
                          "(pip install spacy); the default is --lemmatizer builtin") from e
    try:
        nlp = spacy.load(model, disable=["ner", "parser"])
    except OSError as e:
        raise ConfigError(f"spaCy pipeline {model!r} is not installed; use --lemmatizer builtin") from e

    def lemmas(text: str) -> list[str]:
        return [t.lemma_.lower() for t in nlp(text) if t.pos_ in CONTENT_POS and t.lemma_.lower() not in STOPWORDS]

    return lemmas


LEMMATIZERS: dict[str, Callable[[str], Callable[[str], list[str]]]] = {
    "builtin": lambda _arg: builtin_lemmas,
    "spacy": _spacy,
}
"""Lemmatizer kind → factory of its argument (``spacy:<pipeline>``)."""


def lemmatizer(spec: str = "builtin") -> Lemmatizer:
    """The lemmatizer named ``kind`` or ``kind:argument``."""
    kind, _, arg = spec.partition(":")
    if kind not in LEMMATIZERS:
        raise UnknownNameError("lemmatizer", kind, LEMMATIZERS)
    if kind == "spacy" and not arg:
        raise ConfigError("--lemmatizer spacy needs a pipeline name, e.g. spacy:en_core_web_sm")
    return Lemmatizer(spec, LEMMATIZERS[kind](arg))
