"""ExpliCa data ("ExpliCa: Evaluating Explicit Causal Reasoning in Large Language Models").

One ``Item`` per ordered sentence pair. Its fields hold the two sentences, the four
joined sentences (one per connective, §3) and the mean human rating of each; its gold
label is the connective humans rated highest, or None for UNRELATED pairs (§3.2):

- TYPE and ORDER come from the preferred connective: *so* causal iconic, *because*
  causal anti-iconic, *then* temporal iconic, *after* temporal anti-iconic.
- A pair is UNRELATED when no connective reaches a mean rating of 6 and the mean of the
  four ratings is below 5. §3.2 words it "no connective had a rating higher than 6 and
  with mean rating below 5"; of the readings of that sentence, only the strict
  ``max < 6 and mean < 5`` reproduces Table 1 (1,040 / 656 / 820 / 876 / 1,408 items).
- Ties are broken in the order because, so, after, then (the official file's column
  order); this reproduces every ``human_preferred_connective`` of the official file,
  including its 23 tied pairs.

The loader reads the official CSV layout (``pair_id, Sentence_A, Sentence_B``, four
``rating_*`` columns, optional ``human_preferred_connective``, ``additional_dimension``
and ``frequency_bin``), comma- or tab-separated, and names file, row and field in errors.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_table, write_csv
from lingdiag.prompts.morphology import lemmas_by_pos
from lingdiag.records import Item

CONNECTIVES = ("so", "because", "then", "after")
"""The four connectives (§3), in the order prompts list them by default."""
TIE_ORDER = ("because", "so", "after", "then")
"""Preference among equally rated connectives on the human side (see the module docstring)."""
ALPHABETICAL = ("after", "because", "so", "then")
"""The authors' preference among equally scored connectives on the model side: their notebooks
sort each pair's rows by connective and take the first ``idxmax``/``idxmin``
(../shared/reference/explica/analysis/greedy_accuracy.py, ``get_model_max_rating_cat``)."""
RELATION = {"so": ("causal", "iconic"), "because": ("causal", "anti-iconic"),
            "then": ("temporal", "iconic"), "after": ("temporal", "anti-iconic")}
RATING_COLUMNS = {"so": "rating_iconic_causal", "because": "rating_anticonic_causal",
                  "then": "rating_iconic_temporal", "after": "rating_anticonic_temporal"}
DESCRIPTIONS = {"so": "iconic_caus", "because": "anticonic_caus", "then": "iconic_temp", "after": "anticonic_temp"}
UNRELATED = "unrelated"
CLASSES = ("causal_iconic", "temporal_iconic", "causal_anti-iconic", "temporal_anti-iconic")
"""The four TYPE × ORDER classes, in the column order of Tables 6-9."""
UNRELATED_MAX = 6.0
UNRELATED_MEAN = 5.0
_REQUIRED = ("pair_id", "Sentence_A", "Sentence_B", *RATING_COLUMNS.values())
OFFICIAL_COLUMNS = (*_REQUIRED, "human_preferred_connective", "human_preferred_connective_desc",
                    "additional_dimension")


def class_of(connective: str) -> str:
    """``causal_iconic`` etc. for a connective; ``unrelated`` for anything else."""
    if connective not in RELATION:
        return UNRELATED
    kind, order = RELATION[connective]
    return f"{kind}_{order}"


def best(scores: Mapping[str, float], *, lower_is_better: bool = False,
         order: Sequence[str] = TIE_ORDER) -> str:
    """The connective with the best score, ties broken by ``order``.

    Args:
        scores: A score per connective (missing connectives are ignored).
        lower_is_better: Pick the lowest score (perplexity) instead of the highest (rating).
        order: Preference among tied connectives (``TIE_ORDER`` or ``ALPHABETICAL``).

    Returns:
        The chosen connective.
    """
    present = [c for c in order if c in scores]
    if not present:
        raise ValueError("best() needs at least one connective score")
    sign = -1.0 if lower_is_better else 1.0
    top = max(sign * scores[c] for c in present)
    return next(c for c in present if sign * scores[c] == top)


def is_unrelated(ratings: Mapping[str, float]) -> bool:
    """§3.2: no connective rated 6 or more, and the mean of the four ratings below 5."""
    values = [ratings[c] for c in CONNECTIVES]
    return max(values) < UNRELATED_MAX and sum(values) / len(values) < UNRELATED_MEAN


def gold_label(ratings: Mapping[str, float]) -> str | None:
    """The preferred connective, or None for an UNRELATED pair."""
    return None if is_unrelated(ratings) else best(ratings)


# -- joining two sentences with a connective (§3) -------------------------------------

_CLOSED_CLASS = frozenset("""
a an the this that these those there it its he she they we you my your his her our their
some many several all every each no none both either neither any another other such few most
one two three four five six seven eight nine ten
in on at after before when while if because so then as since during until once
yesterday today tomorrow tonight now later everyone everybody someone somebody nobody nothing
something everything people what who which where how why
""".split())
# Given names (and family words used as names) that are also dictionary words, so that a
# dictionary lookup alone would wrongly lower-case them.
_NAME_WORDS = frozenset("""
Amber April Art Autumn Ben Bill Bob Candy Carol Cliff Daisy Dawn Dean Dick Don Drew Faith Frank
Gene Ginger Glen Grace Harry Heather Holly Hope Iris Ivy Jack Jade Jay Jean Jerry Jimmy Joy June
Lance Lily Mark Martin Matt Max May Mike Miles Morgan Neil Nick Olive Pat Pearl Penny Peter Ray
Reed Rob Robin Rod Rose Ruby Sally Sam Sandy Sherry Stan Sue Summer Tom Victor Violet Wade Warren
Will Mom Mum Dad Grandma Grandpa Granny Grandad Mommy Daddy Mr Mrs Ms Dr
""".split())
_WORD = re.compile(r"([^\w]*)([A-Za-z][\w'’-]*)(.*)", re.S)
_FINAL_PERIOD = re.compile(r"(?<!\.)\.([\"'”’)\]]*)$")


def _known_word(word: str) -> bool:
    return word in _CLOSED_CLASS or bool(lemmas_by_pos(word))


def _mentioned_names(sentences: Iterable[str]) -> set[str]:
    """Capitalised words after the first word of a sentence: names by their position."""
    names = set()
    for s in sentences:
        for word in re.findall(r"[A-Za-z][\w-]*", s)[1:]:
            if len(word) > 1 and word[0].isupper():
                names.add(word)
    return names


def is_proper_noun(word: str, names: Iterable[str] = ()) -> bool:
    """Whether a capitalised sentence-initial ``word`` keeps its capital letter.

    "I" (and I'm, I've...), acronyms, words capitalised inside, ``names`` and given
    names that are also dictionary words keep it; other words the English lexicon knows
    are common words; unknown capitalised words are taken to be names.
    """
    base = re.sub(r"['’]s$", "", word)
    if base == "I" or re.match(r"I['’]", word):
        return True
    if len(base) > 1 and (base.isupper() or any(ch.isupper() for ch in base[1:])):
        return True
    if base in _NAME_WORDS or base in set(names):
        return True
    return not _known_word(base.lower())


def strip_final_period(sentence: str) -> str:
    """The sentence without its final period (kept: closing quotes, ellipses, ?/!)."""
    return _FINAL_PERIOD.sub(r"\1", sentence.strip())


def lower_first(sentence: str, names: Iterable[str] = ()) -> str:
    """Lower-case the first letter unless the first word is a proper noun or "I"."""
    m = _WORD.match(sentence.strip())
    if not m or not m.group(2)[0].isupper() or is_proper_noun(m.group(2), names):
        return sentence.strip()
    prefix, word, rest = m.groups()
    return prefix + word[0].lower() + word[1:] + rest


def join(first: str, second: str, connective: str) -> str:
    """One ExpliCa item: ``first`` without its final period, a comma, the connective, and
    ``second`` with its first letter lower-cased unless it starts with a proper noun.

    Names mentioned inside either sentence count as proper nouns. A missing final period
    on ``second`` is added, so all four sentences of a pair end alike.

    Args:
        first: The first sentence (Sentence_A of an ordered pair).
        second: The second sentence.
        connective: so, because, then or after.

    Returns:
        E.g. ``"Jude walked under the rain for an hour, so Jude got sick."``
    """
    names = _mentioned_names((first, second))
    tail = lower_first(second, names)
    if not re.search(r"[.!?…][\"'”’)\]]*$", tail):
        tail += "."
    return f"{strip_final_period(first)}, {connective} {tail}"


# -- loading ----------------------------------------------------------------------------

def _rating(row: Mapping[str, str], column: str, path: Path | str, n: int) -> float:
    text = row.get(column, "").strip()
    try:
        value = float(text)
    except ValueError:
        raise DatasetError(f"expected a number, found {text!r}", path=path, row=n, field=column) from None
    if not 1.0 <= value <= 10.0:
        raise DatasetError(f"mean rating {value} is outside the 1-10 scale", path=path, row=n, field=column)
    return value


def _row_item(row: Mapping[str, str], path: Path | str, n: int, item_id: str) -> Item:
    for col in ("pair_id", "Sentence_A", "Sentence_B"):
        if not row.get(col, "").strip():
            raise DatasetError("missing or empty", path=path, row=n, field=col)
    ratings = {c: _rating(row, col, path, n) for c, col in RATING_COLUMNS.items()}
    preferred = best(ratings)
    stated = row.get("human_preferred_connective", "").strip()
    if stated and stated != preferred:
        raise DatasetError(f"says {stated!r} but the highest mean rating is {preferred!r} "
                           f"({', '.join(f'{c} {v:.2f}' for c, v in ratings.items())})",
                           path=path, row=n, field="human_preferred_connective")
    desc = row.get("human_preferred_connective_desc", "").strip()
    if desc and desc != DESCRIPTIONS[preferred]:
        raise DatasetError(f"{desc!r} does not describe {preferred!r} (expected {DESCRIPTIONS[preferred]!r})",
                           path=path, row=n, field="human_preferred_connective_desc")
    a, b = row["Sentence_A"].strip(), row["Sentence_B"].strip()
    gold = gold_label(ratings)
    kind, order = RELATION[gold] if gold else (UNRELATED, "none")
    tags: dict[str, Any] = {"relation": class_of(gold or UNRELATED), "type": kind, "order": order,
                            "pair_id": row["pair_id"].strip(), "human_preferred": preferred,
                            "additional_dimension": row.get("additional_dimension", "").strip() or "none"}
    if row.get("frequency_bin", "").strip():
        tags["frequency_bin"] = row["frequency_bin"].strip()
    return Item(id=item_id, gold=gold, tags=tags, fields={
        "sentence_a": a, "sentence_b": b,
        "sentences": {c: join(a, b, c) for c in CONNECTIVES},
        "human": ratings,
    })


def load_rows(rows: Sequence[Mapping[str, str]], path: Path | str, columns: Sequence[str] = ()) -> list[Item]:
    """Validate rows in the official layout and build one item per ordered pair.

    Item ids are ``<pair_id>-<k>``, ``k`` counting the rows of that pair (1, 2). Rows are
    numbered as file lines (the header is row 1).
    """
    cols = set(columns) if columns else set(rows[0]) if rows else set()
    for col in _REQUIRED:
        if col not in cols:
            raise DatasetError(f"missing column (needed: {', '.join(_REQUIRED)})", path=path, field=col)
    items, seen, per_pair = [], {}, {}  # type: ignore[var-annotated]
    for n, row in enumerate(rows, 2):
        pid = row.get("pair_id", "").strip()
        per_pair[pid] = per_pair.get(pid, 0) + 1
        item = _row_item(row, path, n, f"{pid}-{per_pair[pid]}")
        key = (item.fields["sentence_a"], item.fields["sentence_b"])
        if key in seen:
            raise DatasetError(f"the same ordered pair is on row {seen[key]}", path=path, row=n, field="Sentence_A")
        seen[key] = n
        items.append(item)
    if not items:
        raise DatasetError("no rows", path=path)
    return items


FREQUENCY_BINS = {"1_rare": "Rare", "2_uncommon": "Uncommon", "3_common": "Common", "4_frequent": "Frequent"}
"""``freq_cat`` of explica_freq_4800.tsv → the bin names of Tables 10-11, in their order."""


def with_frequency_bins(items: Sequence[Item], path: Path) -> list[Item]:
    """``items`` tagged with the frequency bin of each (ordered pair, connective) row.

    Tables 10-11 bin rows, not pairs: the authors' notebook (model_size_analysis.py) counts each
    of a pair's four rows in the bin of its own connective. Tag ``frequency_bins`` maps
    connective → bin; items without rows in the file are returned unchanged.
    """
    columns, rows = read_table(path)
    for col in ("Sentence_A", "Sentence_B", "tested_connective", "freq_cat"):
        if col not in columns:
            raise DatasetError("missing column", path=path, field=col)
    bins: dict[tuple[str, str], dict[str, str]] = {}
    for n, row in enumerate(rows, 2):
        cat = row["freq_cat"].strip()
        if cat not in FREQUENCY_BINS:
            raise DatasetError(f"unknown bin {cat!r} (known: {', '.join(FREQUENCY_BINS)})", path=path, row=n,
                               field="freq_cat")
        key = (row["Sentence_A"].strip(), row["Sentence_B"].strip())
        bins.setdefault(key, {})[row["tested_connective"].strip()] = FREQUENCY_BINS[cat]
    out = []
    for it in items:
        found = bins.get((it.fields["sentence_a"], it.fields["sentence_b"]))
        out.append(replace(it, tags={**it.tags, "frequency_bins": found}) if found else it)
    return out


def load_csv(path: Path) -> list[Item]:
    """Load and validate an ExpliCa CSV/TSV file (the official layout)."""
    columns, rows = read_table(path)
    return load_rows(rows, path, columns)


# -- the project's own built-in pairs ---------------------------------------------------

# Illustrative mean ratings by preferred connective (so, because, then, after). They are
# NOT human judgements: the built-in pairs only exercise the pipeline.
_TEMPLATE = {
    "so": {"so": 8.4, "because": 2.3, "then": 6.2, "after": 2.6},
    "because": {"so": 2.1, "because": 8.5, "then": 2.4, "after": 6.0},
    "then": {"so": 4.2, "because": 2.2, "then": 8.3, "after": 2.4},
    "after": {"so": 2.2, "because": 4.5, "then": 2.5, "after": 8.2},
    UNRELATED: {"so": 3.1, "because": 2.6, "then": 3.4, "after": 2.9},
}


def builtin_spec() -> Path:
    """The packaged YAML of the project's own sentence pairs."""
    return Path(str(files("lingdiag.suites.explica").joinpath("builtin.yaml")))


def _illustrative(relation: str, rng: random.Random) -> dict[str, float]:
    # Multiples of 1/15 as from 15 raters, jittered by at most 0.4 so the order holds.
    return {c: round(v + rng.randint(-6, 6) / 15, 4) for c, v in _TEMPLATE[relation].items()}


def builtin_rows(spec: Path | None = None) -> list[dict[str, str]]:
    """Rows in the official CSV layout from the built-in YAML (both orders of each pair).

    Each YAML entry has ``a`` and ``b`` (events in chronological/causal order) and the
    relation humans would most likely pick for each order, ``ab`` and ``ba`` (a
    connective or ``unrelated``). Ratings are illustrative (see ``_TEMPLATE``).
    """
    path = spec or builtin_spec()
    try:
        entries = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise DatasetError(f"cannot read: {e}", path=path) from e
    if not isinstance(entries, list):
        raise DatasetError("expected a list of pairs", path=path)
    rows = []
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise DatasetError("expected a mapping", path=path, row=n)
        for key in ("a", "b", "ab", "ba"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise DatasetError("missing or empty", path=path, row=n, field=key)
        rng = random.Random(f"explica-builtin-{n}")
        for first, second, rel, key in ((entry["a"], entry["b"], entry["ab"], "ab"),
                                        (entry["b"], entry["a"], entry["ba"], "ba")):
            if rel not in _TEMPLATE:
                raise DatasetError(f"{rel!r} is not one of {', '.join(_TEMPLATE)}", path=path, row=n, field=key)
            ratings = _illustrative(rel, rng)
            preferred = best(ratings)
            rows.append({"pair_id": str(n - 1), "Sentence_A": first, "Sentence_B": second,
                         **{RATING_COLUMNS[c]: repr(v) for c, v in ratings.items()},
                         "human_preferred_connective": preferred,
                         "human_preferred_connective_desc": DESCRIPTIONS[preferred],
                         "additional_dimension": "none"})
    return rows


def write_builtin(out: Path, spec: Path | None = None) -> int:
    """Write the built-in pairs as an official-layout CSV; returns the number of rows."""
    rows = builtin_rows(spec)
    return write_csv(out, list(OFFICIAL_COLUMNS), [[r.get(c, "") for c in OFFICIAL_COLUMNS] for r in rows])


def builtin_items() -> list[Item]:
    """The built-in dataset, validated like an official file."""
    return load_rows(builtin_rows(), "builtin")
