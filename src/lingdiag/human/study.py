"""Study types: what raters see and answer, and the built-in two.

``acceptability`` is ExpliCa's (§3.2, App. B): every variant of an item (each connective
joining the pair) is rated for acceptability from 1 to 10. ``quality`` is ImperfectiveNLI's
review (§3, App. C): each sentence of an item is rated for Grammar, Fluency and Adequacy on a
5-point scale, with an optional correction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lingdiag.records import Item
from lingdiag.registry import Registry
from lingdiag.suite import ItemView


@dataclass(frozen=True, slots=True)
class Question:
    """One answer a rater gives per stimulus."""

    key: str
    """Its column in the responses (``rating``, ``grammar``, ``correction``)."""
    label: str
    low: int | None = None
    """Lowest scale point; None for free text."""
    high: int | None = None
    anchors: str = ""

    @property
    def scale(self) -> bool:
        """Whether the answer is a point on a numeric scale."""
        return self.low is not None and self.high is not None


@dataclass(frozen=True, slots=True)
class Stimulus:
    """One thing raters judge: a variant of an item, or an attention check."""

    id: str
    item_id: str
    variant: str
    text: str
    expected: Mapping[str, int] | None = None
    """An attention check's required answer per question; None for a real stimulus."""


@dataclass(frozen=True, slots=True)
class StudyType:
    """A kind of rating study."""

    name: str
    title: str
    instructions: str
    questions: tuple[Question, ...]
    level: str
    """Krippendorff's level of measurement of the scale questions (``interval``, ``ordinal``)."""
    stimuli: Callable[[Item, ItemView], list[Stimulus]] = field(repr=False)

    @property
    def scales(self) -> tuple[Question, ...]:
        """The scale questions (agreement and gold are computed on these)."""
        return tuple(q for q in self.questions if q.scale)


STUDIES: Registry[StudyType] = Registry("study type")


def _variants(item: Item, view: ItemView) -> list[Stimulus]:
    texts: Mapping[str, str] | None = item.fields.get(view.variants) if view.variants else None
    if not texts:
        text = " ".join(str(item.fields[h]) for h in view.halves)
        return [Stimulus(f"{item.id}|item", item.id, "item", text)]
    return [Stimulus(f"{item.id}|{v}", item.id, v, str(t)) for v, t in texts.items()]


def _sentences(item: Item, view: ItemView) -> list[Stimulus]:
    return [Stimulus(f"{item.id}|{h}", item.id, h, str(item.fields[h])) for h in view.halves]


def register_study(study: StudyType) -> StudyType:
    """Register ``study`` under its name."""
    STUDIES.register(study.name)(study)
    return study


register_study(StudyType(
    name="acceptability",
    title="How acceptable is each sentence?",
    instructions=("You will read sentences made of two events joined by a word such as 'so', 'because', "
                  "'then' or 'after'. Rate how acceptable each sentence is, from 1 (completely unacceptable) "
                  "to 10 (completely acceptable). There are no right or wrong answers: give your first "
                  "impression. Some sentences ask you to pick a given number: please do so."),
    questions=(Question("rating", "Acceptability", 1, 10, "1 = completely unacceptable, 10 = completely acceptable"),),
    level="interval",
    stimuli=_variants,
))
register_study(StudyType(
    name="quality",
    title="Review the quality of each sentence",
    instructions=("Rate each sentence on three dimensions from 1 to 5. Grammar: is the sentence grammatically "
                  "correct? (5 = perfect, 1 = major errors). Fluency: does it sound natural to a native speaker? "
                  "(5 = very natural, 1 = very awkward). Adequacy: is the meaning clear and logical? "
                  "(5 = perfectly clear, 1 = confusing or nonsensical). Please suggest a correction for any "
                  "sentence you rate 3 or lower. Some sentences ask you to pick given numbers: please do so."),
    questions=(Question("grammar", "Grammar", 1, 5), Question("fluency", "Fluency", 1, 5),
               Question("adequacy", "Adequacy", 1, 5), Question("correction", "Correction (optional)")),
    level="ordinal",
    stimuli=_sentences,
))


def attention_text(study: StudyType, expected: Mapping[str, int]) -> str:
    """The instructed-answer sentence of an attention check."""
    asks = ", ".join(f"{q.label} {expected[q.key]}" for q in study.scales)
    return f"This is an attention check. Please answer: {asks}."


def stimuli_of(study: StudyType, items: Sequence[Item], view: ItemView) -> list[Stimulus]:
    """Every real stimulus of ``items``, in item order."""
    return [s for it in items for s in study.stimuli(it, view)]
