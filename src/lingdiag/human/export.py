"""Writing a rating study: the manifest ``import`` reads back, a CSV for survey platforms and a
self-contained HTML form that works offline.

Items are shuffled once with the study seed and their stimuli cut into lists of about N (an
item's variants are never split across lists); each list gets its own
attention checks (a stimulus that tells the rater which answer to pick). In the HTML form a
rater types an identifier; the list comes from the URL (``form.html?list=2``) or, without one,
from a hash of the identifier, and the order within the list is shuffled with a generator
seeded by the study seed and the identifier, so a rater who reloads sees the same order.
Answers stay in the page until the rater downloads them as a CSV (a Blob link), one row per
stimulus.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from lingdiag.errors import ConfigError, DatasetError
from lingdiag.human.study import STUDIES, Stimulus, StudyType, attention_text, stimuli_of
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.tabular import read_json, write_csv
from lingdiag.records import Item
from lingdiag.suite import ItemView

RESPONSE_COLUMNS = ("rater", "list", "position", "stimulus", "item_id", "variant")
"""Columns of a response file before the study's question columns."""


@dataclass(frozen=True, slots=True)
class Study:
    """One exported study: its stimuli and the lists raters are assigned."""

    study: str
    """The study type's name."""
    suite: str
    dataset: str
    """The dataset spec the suite loads (``builtin``, ``official``, a path)."""
    seed: int
    stimuli: Sequence[Stimulus]
    """Real stimuli then attention checks."""
    lists: Sequence[Sequence[str]]
    """Stimulus ids of each list (in the list's base order; the form shuffles per rater)."""

    @property
    def kind(self) -> StudyType:
        """The registered study type."""
        return STUDIES.get(self.study)

    def to_json(self) -> str:
        """The manifest text."""
        return json.dumps(asdict(self), indent=1, ensure_ascii=False, sort_keys=True) + "\n"

    @staticmethod
    def read(path: Path) -> Study:
        """A manifest written by ``export``."""
        try:
            d = read_json(Path(path))
            return Study(d["study"], d["suite"], d["dataset"], int(d["seed"]), [Stimulus(**s) for s in d["stimuli"]],
                         [list(x) for x in d["lists"]])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DatasetError(f"not a study manifest written by `lingdiag human export` ({e})", path=path) from e


def build_study(kind: StudyType, suite: str, dataset: str, items: Sequence[Item], view: ItemView, *, per_list: int,
                attention: int, seed: int) -> Study:
    """Cut ``items``' stimuli into shuffled lists of ``per_list`` plus ``attention`` checks each."""
    if per_list < 1 or attention < 0:
        raise ConfigError("--per-list must be at least 1 and --attention at least 0")
    real = stimuli_of(kind, items, view)
    if not real:
        raise ConfigError("the dataset has no items to rate")
    rng = random.Random(seed)
    # An item's variants stay in one list, so each rater compares them all (a rater's own
    # preferred variant is what `lingdiag human compare` sets against a model's answer).
    groups: dict[str, list[str]] = {}
    for s in real:
        groups.setdefault(s.item_id, []).append(s.id)
    order = list(groups)
    rng.shuffle(order)
    lists: list[list[str]] = [[]]
    for item_id in order:
        if lists[-1] and len(lists[-1]) + len(groups[item_id]) > per_list:
            lists.append([])
        lists[-1].extend(groups[item_id])
    checks = []
    for k, ids in enumerate(lists):
        for j in range(attention):
            expected = {q.key: rng.randint(q.low, q.high) for q in kind.scales}  # type: ignore[arg-type]
            check = Stimulus(f"attention-{k + 1}-{j + 1}", "", "attention", attention_text(kind, expected), expected)
            checks.append(check)
            ids.insert(rng.randint(0, len(ids)), check.id)
    return Study(kind.name, suite, dataset, seed, [*real, *checks], lists)


def write_platform_csv(study: Study, path: Path) -> int:
    """One row per (list, stimulus) for survey platforms; the question columns are left empty."""
    by_id = {s.id: s for s in study.stimuli}
    keys = [q.key for q in study.kind.questions]

    def rows() -> Iterator[list[object]]:
        for k, ids in enumerate(study.lists, 1):
            for pos, sid in enumerate(ids, 1):
                s = by_id[sid]
                expected = json.dumps(dict(s.expected), sort_keys=True) if s.expected else ""
                yield [k, pos, s.id, s.item_id, s.variant, s.text, expected, *[""] * len(keys)]

    return write_csv(path, ["list", "position", "stimulus", "item_id", "variant", "text", "attention_answer", *keys],
                     rows())


def _script_json(value: Any) -> str:
    # Inside <script>, "</" would end the element and "<!--" open a comment: escape "<" so
    # stimulus text (which may be model output) can never become markup.
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c")


def write_form(study: Study, path: Path) -> None:
    """The offline HTML form (template ``form.html`` beside this module, data inlined as JSON)."""
    kind = study.kind
    data = {"title": kind.title, "instructions": kind.instructions, "seed": study.seed, "study": kind.name,
            "questions": [asdict(q) for q in kind.questions], "lists": study.lists,
            "columns": list(RESPONSE_COLUMNS),
            "stimuli": {s.id: {"text": s.text, "item_id": s.item_id, "variant": s.variant} for s in study.stimuli}}
    template = files("lingdiag.human").joinpath("form.html").read_text(encoding="utf-8")
    html = template.replace("__STUDY_JSON__", _script_json(data))
    write_atomic(path, html)


@dataclass(frozen=True, slots=True)
class Exported:
    """Paths written by ``export``."""

    manifest: Path
    platform_csv: Path
    form: Path
    n_stimuli: int
    n_lists: int


def export(study: Study, out_dir: Path) -> Exported:
    """Write ``study.json``, ``platform.csv`` and ``form.html`` into ``out_dir``."""
    make_dir(out_dir)
    manifest, platform, form = out_dir / "study.json", out_dir / "platform.csv", out_dir / "form.html"
    write_atomic(manifest, study.to_json())
    write_platform_csv(study, platform)
    write_form(study, form)
    return Exported(manifest, platform, form, sum(s.expected is None for s in study.stimuli), len(study.lists))
