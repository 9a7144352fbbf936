"""Guards run before any training: nothing of the evaluation set leaks in, no licence is broken.

``audit`` counts what a training set shares with the evaluation set (sentences, held-out
lemmas); ``check_leakage`` refuses any sharing with one line and returns the audit (all
zeros) for the caller to print. ``check_licence`` refuses a training dataset whose licence
forbids training models, recognised by name (``official``) or by content (a copy of an
official file, found by its SHA-256).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.adapt.data import LemmaSplit, lemma_of, sentences
from lingdiag.errors import DatasetError
from lingdiag.io.fetch import OFFICIAL
from lingdiag.records import Item


@dataclass(frozen=True, slots=True)
class OverlapAudit:
    """What a training set shares with the evaluation set."""

    train_items: int
    eval_items: int
    shared_sentences: tuple[str, ...]
    """Sentences found in both (normalised as ``data.sentences``), sorted."""
    shared_held_out: tuple[str, ...]
    """Held-out lemmas found in training, sorted."""
    trained_lemmas_in_eval: int
    """Evaluation lemmas training may use and does (the ``trained`` side of the re-diagnosis)."""
    held_out_lemmas: int

    @property
    def clean(self) -> bool:
        """Whether nothing leaks."""
        return not self.shared_sentences and not self.shared_held_out

    def line(self, field: str) -> str:
        """The audit in one line, as ``lingdiag adapt`` prints it."""
        return (f"overlap audit: {self.train_items} training items vs {self.eval_items} evaluation items: "
                f"{len(self.shared_sentences)} shared sentences, {len(self.shared_held_out)} shared held-out "
                f"{field}s ({self.held_out_lemmas} held out; {self.trained_lemmas_in_eval} trained {field}s "
                "also in the evaluation set)")


def audit(train: Sequence[Item], evaluation: Sequence[Item], split: LemmaSplit) -> OverlapAudit:
    """Count what ``train`` shares with ``evaluation`` under ``split``."""
    eval_sentences = set().union(*(sentences(i) for i in evaluation))
    train_sentences = set().union(*(sentences(i) for i in train))
    train_lemmas = {lemma_of(i, split.field) for i in train}
    return OverlapAudit(len(train), len(evaluation), tuple(sorted(train_sentences & eval_sentences)),
                        tuple(sorted(train_lemmas & split.held_out)), len(train_lemmas & split.trained),
                        len(split.held_out))


def check_leakage(train: Sequence[Item], evaluation: Sequence[Item], split: LemmaSplit, *,
                  source: str) -> OverlapAudit:
    """The audit of ``train`` against ``evaluation``; a one-line error if anything leaks.

    Args:
        train: The training items.
        evaluation: The items of the re-diagnosis.
        split: The lemma split (its held-out lemmas must not be trained on).
        source: The training set's name, for the error.

    Raises:
        DatasetError: ``train`` shares a sentence or a held-out lemma with ``evaluation``.
    """
    result = audit(train, evaluation, split)
    if not result.clean:
        found = [f"{len(result.shared_sentences)} sentence(s) (first: {result.shared_sentences[0]!r})"
                 ] if result.shared_sentences else []
        if result.shared_held_out:
            found.append(f"{len(result.shared_held_out)} held-out {split.field}(s) "
                         f"({', '.join(result.shared_held_out[:5])})")
        raise DatasetError(f"training set shares {' and '.join(found)} with the evaluation set; refusing to train",
                           path=source)
    return result


def check_licence(suite: str, spec: str) -> None:
    """Refuse a training dataset whose licence forbids training models.

    Args:
        suite: The suite the dataset belongs to.
        spec: ``official``, ``builtin`` or a file path (recognised as an official file by its SHA-256).

    Raises:
        DatasetError: One line naming the file and its licence.
    """
    if spec == "builtin":
        return
    if spec == "official":
        files = OFFICIAL.get(suite, ())
    else:
        path = Path(spec)
        if not path.is_file():
            return  # the suite's loader names a missing file
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        files = tuple(f for fs in OFFICIAL.values() for f in fs if f.sha256 == digest)
    for f in files:
        if not f.trainable:
            raise DatasetError(f"its licence ({f.licence}) forbids training models on it; "
                               "choose a builder or another dataset", path=spec if spec != "official" else f.local)
