"""English morphology by lemminflect (maintained inflection tables, not hand rules), in one place.

The lookups (:func:`lemmas_by_pos`, :func:`verb_lemmas`, :func:`noun_lemmas`, :func:`inflections`,
:func:`all_inflections`) are the only calls into lemminflect; on them stand the verb and noun
phrase helpers the CxNLI templates fill their slots with (:func:`verb_tag`, :func:`inflect`,
:func:`is_plural`, :func:`conjugate`). Each raises ``ValueError`` where lemminflect does not
know a word; callers turn that into their own one-line error.
"""

from __future__ import annotations

import re

# Order matters for ambiguous surface forms ("cut", "hit"): a past reading is preferred,
# as corpus premises are mostly narrative.
_TAG_ORDER = ("VBZ", "VBD", "VBP", "VBG", "VBN", "VB")
_PLURAL_PRONOUNS = {"we", "us", "they", "them", "you", "these", "those"}
_SINGULAR_PRONOUNS = {"i", "me", "he", "him", "she", "her", "it", "this", "that", "one"}
_HEAD_STOP = {"of", "with", "in", "on", "at", "to", "from", "for", "that", "who", "which", "into", "across", "by"}


def lemmas_by_pos(word: str) -> dict[str, tuple[str, ...]]:
    """Every lemma lemminflect knows for ``word``, by universal part of speech (empty if none)."""
    from lemminflect import getAllLemmas

    return {pos: tuple(map(str, found)) for pos, found in getAllLemmas(word).items()}


def verb_lemmas(word: str) -> tuple[str, ...]:
    """The verb lemmas of ``word`` (``ran`` → ``run``); empty when it is no verb form lemminflect knows."""
    from lemminflect import getLemma

    return tuple(map(str, getLemma(word, "VERB")))


def noun_lemmas(word: str) -> tuple[str, ...]:
    """The noun lemmas of ``word`` (``twins`` → ``twin``)."""
    from lemminflect import getLemma

    return tuple(map(str, getLemma(word, "NOUN")))


def inflections(lemma: str, tag: str) -> tuple[str, ...]:
    """The forms of ``lemma`` with Penn tag ``tag`` (``run``, ``VBG`` → ``running``); empty if none."""
    from lemminflect import getInflection

    return tuple(map(str, getInflection(lemma, tag)))


def all_inflections(lemma: str) -> dict[str, tuple[str, ...]]:
    """Every verb form lemminflect's lexicon lists for ``lemma``, by Penn tag."""
    from lemminflect import getAllInflections

    return {tag: tuple(map(str, forms)) for tag, forms in getAllInflections(lemma, "VERB").items()}


def _lemma(verb: str) -> str:
    lemmas = verb_lemmas(verb.lower())
    if not lemmas:
        raise ValueError(f"lemminflect finds no verb lemma for {verb!r}")
    return lemmas[0]


def verb_tag(verb: str) -> str:
    """The Penn tag of a verb's surface form (``hammered`` → ``VBD``), by lemminflect."""
    head = verb.split()[0].lower()
    lemma = _lemma(head)
    known = all_inflections(lemma)
    for tag in _TAG_ORDER:
        if head in known.get(tag, ()) or head in inflections(lemma, tag):
            return tag
    raise ValueError(f"lemminflect does not know {head!r} as a form of {lemma!r}")


def inflect(verb: str, tag: str) -> str:
    """The head (first word) of ``verb`` in form ``tag``; particles are kept (``ate up``)."""
    head, *rest = verb.split()
    forms = inflections(_lemma(head), tag)
    if not forms:
        raise ValueError(f"lemminflect has no {tag} form for {head!r}")
    return " ".join([forms[0], *rest])


def is_plural(np: str) -> bool:
    """Whether a noun phrase is plural: pronouns, coordination, or a plural head noun."""
    words = re.findall(r"[\w'’-]+", np.lower())
    if not words:
        return False
    if len(words) == 1 and words[0] in _PLURAL_PRONOUNS | _SINGULAR_PRONOUNS:
        return words[0] in _PLURAL_PRONOUNS
    if "and" in words:
        return True
    head = words[0]
    for w in words[1:]:
        if w in _HEAD_STOP:
            break
        head = w
    lemmas = noun_lemmas(head)
    return bool(lemmas) and lemmas[0] != head


def conjugate(lemma: str, verb: str, subject: str | None) -> str:
    """``lemma`` in the tense of ``verb``, agreeing with ``subject`` (or with ``verb``'s own form)."""
    tag = verb_tag(verb)
    subj = (subject or "").strip().lower()
    plural = is_plural(subject) if subject else tag == "VBP"
    if tag == "VBD":
        if lemma == "be":
            return "were" if plural else "was"
        return inflections(lemma, "VBD")[0]
    if subj in ("i", "me"):
        return "am" if lemma == "be" else inflections(lemma, "VBP")[0]
    if plural:
        return "are" if lemma == "be" else inflections(lemma, "VBP")[0]
    return "is" if lemma == "be" else inflections(lemma, "VBZ")[0]
