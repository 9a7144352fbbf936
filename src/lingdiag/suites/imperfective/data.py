"""ImperfectiveNLI data: the official JSON, and a generator of the project's own items.

Paper §3: 100 telic and 100 atelic verbs, four minimal-pair groups, gold labels mapped to
True/False/Unknown: A interrupted accomplishment → False, B interrupted activity → True,
C ambiguous accomplishment → Unknown, D ambiguous activity → True.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_json, read_table
from lingdiag.prompts.morphology import inflections
from lingdiag.records import Item

LABELS = ("True", "False", "Unknown")
GOLD_BY_GROUP = {"A": "False", "B": "True", "C": "Unknown", "D": "True"}
TELIC_CLASSES = ("Change_of_State", "Consumption", "Creation", "Motion_to_Goal")
VERB_CLASSES = (*TELIC_CLASSES, "Activity")
_FIELDS = ("id", "group", "verb_class", "verb", "premise", "hypothesis", "label")


def _row_item(row: Mapping[str, Any], path: Path | str, n: int) -> Item:
    for f in _FIELDS:
        if not isinstance(row.get(f), str) or not row[f].strip():
            raise DatasetError("missing or empty (expected a string)", path=path, row=n, field=f)
    group = row["group"][0]
    if group not in GOLD_BY_GROUP or (len(row["group"]) > 1 and row["group"][1] != "_"):
        raise DatasetError(f"group {row['group']!r} is not one of A-D", path=path, row=n, field="group")
    if row["label"] not in LABELS:
        raise DatasetError(f"label {row['label']!r} is not one of {', '.join(LABELS)}", path=path, row=n,
                           field="label")
    if row["label"] != GOLD_BY_GROUP[group]:
        raise DatasetError(f"group {group} requires label {GOLD_BY_GROUP[group]!r}, found {row['label']!r}",
                           path=path, row=n, field="label")
    if row["verb_class"] not in VERB_CLASSES:
        raise DatasetError(f"verb_class {row['verb_class']!r} is not one of {', '.join(VERB_CLASSES)}",
                           path=path, row=n, field="verb_class")
    telic = row["verb_class"] in TELIC_CLASSES
    if telic != (group in "AC"):
        raise DatasetError(f"group {group} needs {'a telic' if group in 'AC' else 'an atelic (Activity)'} "
                           f"verb_class, found {row['verb_class']!r}", path=path, row=n, field="verb_class")
    return Item(id=row["id"], fields={"premise": row["premise"], "hypothesis": row["hypothesis"]},
                gold=row["label"], tags={"group": group, "verb_class": row["verb_class"], "verb": row["verb"]})


def load_json(path: Path) -> list[Item]:
    """Load and validate an ImperfectiveNLI JSON file (a list of objects).

    Rows are numbered from 1 in errors. Ids must be unique.
    """
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError("expected a JSON list of items", path=path)
    items, seen = [], set()
    for n, row in enumerate(data, 1):
        if not isinstance(row, dict):
            raise DatasetError("expected an object", path=path, row=n)
        item = _row_item(row, path, n)
        if item.id in seen:
            raise DatasetError(f"duplicate id {item.id!r}", path=path, row=n, field="id")
        seen.add(item.id)
        items.append(item)
    return items


# -- the project's own generator -------------------------------------------------------

_LEXICON_COLUMNS = ("verb", "aspect", "verb_class", "subject", "plural", "complement", "interruption")


def default_lexicon() -> Path:
    """The packaged lexicon: the paper's Appendix A verbs with the project's own phrases."""
    return Path(str(files("lingdiag.suites.imperfective").joinpath("lexicon.csv")))


def default_templates() -> Path:
    """The packaged sentence templates."""
    return Path(str(files("lingdiag.suites.imperfective").joinpath("templates.yaml")))


def read_lexicon(path: Path) -> list[dict[str, str]]:
    """Read a lexicon from CSV or YAML (a list of mappings with the lexicon columns)."""
    path = Path(path)
    rows: Any
    if path.suffix in (".yaml", ".yml"):
        try:
            rows = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise DatasetError(f"cannot read: {e.strerror}", path=path) from e
        start = 1
    else:
        rows, start = read_table(path)[1], 2  # row 1 is the header
    if not isinstance(rows, list):
        raise DatasetError("expected a list of verb entries", path=path)
    out = []
    for n, row in enumerate(rows, start):
        if not isinstance(row, dict):
            raise DatasetError("expected a mapping", path=path, row=n)
        for col in _LEXICON_COLUMNS:
            if col not in row or (row[col] in (None, "") and col != "complement"):
                raise DatasetError("missing", path=path, row=n, field=col)
        entry = {k: "" if v is None else str(v) for k, v in row.items() if k is not None}
        if entry["aspect"] not in ("telic", "atelic"):
            raise DatasetError(f"aspect {entry['aspect']!r} is not telic or atelic", path=path, row=n, field="aspect")
        if entry["verb_class"] not in VERB_CLASSES:
            raise DatasetError(f"verb_class {entry['verb_class']!r} is not one of {', '.join(VERB_CLASSES)}",
                               path=path, row=n, field="verb_class")
        if (entry["aspect"] == "telic") != (entry["verb_class"] in TELIC_CLASSES):
            raise DatasetError(f"aspect {entry['aspect']} does not fit verb_class {entry['verb_class']}",
                               path=path, row=n, field="verb_class")
        entry["_row"] = str(n)
        out.append(entry)
    return out


def _inflect(verb: str, tag: str, override: str) -> str:
    if override:
        return override
    forms = inflections(verb, tag)
    if not forms:
        raise DatasetError(f"lemminflect has no {tag} form for {verb!r}; add it in the lexicon's "
                           f"{'ing' if tag == 'VBG' else 'past'} column")
    return forms[0]


def _fill(template: str, values: Mapping[str, str]) -> str:
    text = template.format(**values)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s+([,.])", r"\1", text).strip()


def generate(
    lexicon: Sequence[Mapping[str, str]],
    templates: Mapping[str, str],
    seed: int = 0,
) -> list[dict[str, str]]:
    """Build groups A-D from a lexicon (official JSON row format, ready to save).

    Fields of a lexicon entry may list alternatives separated by ``|``; ``seed`` picks
    one per entry, so the same seed always gives the same dataset.

    Args:
        lexicon: Entries from :func:`read_lexicon`.
        templates: ``premise_progressive``, ``premise_interrupted`` and ``hypothesis``.
        seed: Chooses among alternatives.

    Returns:
        Rows with ``id, group, verb_class, verb, premise, hypothesis, label``; telic verbs
        give groups A and C, atelic verbs B and D.
    """
    for key in ("premise_progressive", "premise_interrupted", "hypothesis"):
        if key not in templates:
            raise DatasetError(f"templates need a {key!r} entry")
    rng = random.Random(seed)
    groups: dict[str, list[dict[str, str]]] = {g: [] for g in "ABCD"}
    for entry in lexicon:
        pick = {k: rng.choice(v.split("|")).strip() for k, v in entry.items() if not k.startswith("_")}
        verb = pick["verb"]
        values = {
            "subject": pick["subject"], "complement": pick["complement"], "interruption": pick["interruption"],
            "be": "were" if pick["plural"] in ("1", "true", "True", "yes") else "was",
            "ing": _inflect(verb, "VBG", pick.get("ing", "")), "past": _inflect(verb, "VBD", pick.get("past", "")),
        }
        hyp = _fill(templates["hypothesis"], values)
        interrupted, plain = ("A", "C") if pick["aspect"] == "telic" else ("B", "D")
        for group, key in ((interrupted, "premise_interrupted"), (plain, "premise_progressive")):
            groups[group].append({"group": group, "verb_class": pick["verb_class"], "verb": verb,
                                  "premise": _fill(templates[key], values), "hypothesis": hyp,
                                  "label": GOLD_BY_GROUP[group]})
    rows = []
    for g in "ABCD":
        for k, row in enumerate(groups[g], 1):
            rows.append({"id": f"{g}_{k:03d}", **row})
    return rows


def build(lexicon: Path | None = None, templates: Path | None = None, seed: int = 0) -> list[dict[str, str]]:
    """Generate from lexicon and template files (the packaged ones by default)."""
    tpath = templates or default_templates()
    try:
        tmpl = yaml.safe_load(Path(tpath).read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"cannot read: {e.strerror}", path=tpath) from e
    if not isinstance(tmpl, dict):
        raise DatasetError("expected a mapping of template names to strings", path=tpath)
    return generate(read_lexicon(lexicon or default_lexicon()), tmpl, seed)


def builtin_items(seed: int = 0) -> list[Item]:
    """The built-in dataset: the packaged lexicon and templates, validated like official data."""
    return [_row_item(row, "builtin", n) for n, row in enumerate(build(seed=seed), 1)]
