"""What a diagnostic suite provides to the engine.

A suite is one package under ``lingdiag.suites`` (or a user's own package) that builds a
``Suite`` and registers it: it loads a dataset, turns the user's axis selection
(strategies, shots, decoding, ...) and validated options into ``Condition``s, and computes
metrics and a paper-style table from scored records. Figures, cross-run analyses and
command-line tools are optional. The orchestrator (``lingdiag.engine``), the report and the CLI
know nothing suite-specific.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from lingdiag.config import NoOptions, validate_options
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.figures import Figure, ModelColours
from lingdiag.metrics.core import summary
from lingdiag.records import Item, ItemRecord, Prediction, Request, Response, ResultRow
from lingdiag.registry import Registry
from lingdiag.rundir.parts import Excluded, SuiteSource

if TYPE_CHECKING:
    from lingdiag.metrics.counts import CountMetric


class Strategy(Protocol):
    """Turns an item into requests, and the responses back into a prediction.

    A strategy that asks for an answer format ships the parser for that format.
    """

    def render(self, item: Item) -> Sequence[Request]:
        """The requests this item needs (one prompt, or one per candidate answer)."""
        ...

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The prediction from this item's responses, in request order."""
        ...


@runtime_checkable
class AnswerChoices(Protocol):
    """A generation strategy whose one answer names one of a few choices: a judge model may read it
    (``--reader judge:SPEC``, ``lingdiag.engine.judge``).
    """

    def answer_choices(self, item: Item) -> Mapping[str, str]:
        """What the answer to ``item`` may name (a label, a letter) → the label each one is."""
        ...


@dataclass(frozen=True, slots=True)
class Condition:
    """One cell of a suite's condition grid, with the items it runs on."""

    name: str
    """Unique within a run, e.g. ``cot`` or ``cloze/1-shot/constrained``."""
    axes: Mapping[str, str]
    strategy: Strategy
    items: Sequence[Item]


@dataclass(frozen=True, slots=True)
class Axis:
    """A condition dimension a user selects on the command line (``--strategy a,b``)."""

    name: str
    values: tuple[str, ...]
    default: tuple[str, ...]
    help: str = ""


@dataclass(frozen=True, slots=True)
class Dataset:
    """A loaded dataset: the test items plus anything else the conditions draw on."""

    name: str
    """``builtin``, ``official`` or a path."""
    items: Sequence[Item]
    extras: Mapping[str, Any] = field(default_factory=dict)
    """E.g. pools of in-context examples."""
    source: Mapping[str, str] = field(default_factory=dict)
    """Files read and their SHA-256, for ``meta.json``."""
    excluded: Sequence[Excluded] = ()
    """Items of the files left out as not interpretable, with why (``meta.json``'s ``excluded``)."""

    def require_items(self) -> Dataset:
        """``self``, or a one-line ``DatasetError`` when it holds no item (a run over nothing
        would report "ok" and metrics over zero items).
        """
        if not self.items:
            raise DatasetError("no items: the dataset is empty", path=", ".join(self.source) or self.name)
        return self


@dataclass(frozen=True, slots=True)
class ItemView:
    """Where an item's two halves, class and variants are, for dataset audits and human studies
    (``lingdiag data audit``, ``lingdiag human export``), which know no suite.
    """

    halves: tuple[str, str]
    """The item fields holding the two texts whose association is audited (premise, hypothesis)."""
    class_tag: str = "gold"
    """The item tag the audit compares classes by; ``gold`` means the gold label."""
    variants: str | None = None
    """An item field mapping variant name → full text (ExpliCa: connective → joined sentence)."""
    layout: RatingLayout | None = None
    """How mean human ratings per variant are written back as a file the suite loads."""


@dataclass(frozen=True, slots=True)
class RatingLayout:
    """The columns of a suite's data file that a human rating study fills (``lingdiag human import``)."""

    halves: tuple[str, str]
    """Columns of the two halves (``Sentence_A``, ``Sentence_B``)."""
    ratings: Mapping[str, str]
    """Variant → column of its mean rating."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Column → the item tag copied into it (``pair_id``)."""


Conditions = Callable[[Dataset, Mapping[str, Sequence[str]], Any, int], list[Condition]]
"""``conditions(dataset, axis_selection, options, seed)``; ``options`` is an instance of the
suite's ``options`` model."""


@dataclass(frozen=True)
class Suite:
    """A registered diagnostic suite."""

    name: str
    description: str
    axes: tuple[Axis, ...]
    load: Callable[[str], Dataset]
    """``load(spec)`` with spec ``builtin``, ``official`` or a path/URL."""
    conditions: Conditions
    metrics: Callable[[Sequence[ItemRecord]], Mapping[str, Any]]
    """Metrics of one condition's records; pure, so reports can be recomputed offline. A built-in
    suite returns its own TypedDict, so that a renamed key fails ``mypy`` in its tables."""
    table: Callable[[Sequence[ResultRow]], str]
    """Markdown tables in the paper's layout from the rows of one or more runs."""
    labels: tuple[str, ...] = ()
    """The labels a record may hold besides ``UNPARSED``; a record with another is refused
    (empty: the suite's labels are open, e.g. connectives)."""
    options: type[BaseModel] = NoOptions
    """The suite's options (``-o key=value``): a pydantic model with ``extra="forbid"``."""
    stat_tags: tuple[str, ...] = ()
    """Item tags that ``lingdiag data stats`` counts items by."""
    default_dataset: str = "builtin"
    build: Callable[[Path | None, Path | None, int], list[dict[str, Any]]] | None = None
    """``build(lexicon, templates, seed)``: rows of a new dataset file from user material
    (``lingdiag data build``); None where the suite has no generator."""
    figures: Callable[[Sequence[ResultRow], ModelColours], list[Figure]] | None = None
    """The suite's figures for a report, from result rows (never from a model), a model series in the
    report's colour."""
    analyses: Callable[[Sequence[ResultRow]], str] | None = None
    """A markdown section of cross-run analyses for a report."""
    cli: Callable[[], Any] | None = None
    """Returns the suite's ``typer.Typer`` app, mounted as ``lingdiag <name>``; called only by
    the CLI, so the suite loads without typer."""
    score_cli: Callable[[], Callable[..., None]] | None = None
    """Returns the ``lingdiag score <name>`` command function (outside answers → metrics)."""
    parse_answer: Callable[[str], Prediction] | None = None
    """Answer text → the prediction (its label, and the rule or the reason under ``detail``), for
    answers produced elsewhere (``lingdiag score <name>`` when the suite has no ``score_cli`` of its
    own)."""
    view: ItemView | None = None
    """How audits and human studies read the items; None where the suite does not say."""
    reproduce_cli: Callable[[], Callable[..., None]] | None = None
    """Returns the ``lingdiag reproduce <name>`` command function (published outputs → the
    paper's tables, ours beside theirs)."""
    paired_metrics: Mapping[str, CountMetric] = field(default_factory=dict)
    """The rates and gaps ``lingdiag compare`` tests by paired permutation, by their key in
    ``metrics``; ``metrics`` computes those keys with these same objects, so each metric has
    one definition."""
    source: SuiteSource | None = None
    """The suite file this suite was read from; None for a suite written in Python."""
    competence: Callable[..., Sequence[Any]] | None = None
    """``competence(model, records, seed=0)``: the suite's competence-vs-performance join of one
    run's records, a list of :class:`lingdiag.analysis.competence.CompetenceJoin` (typed loosely
    here because the analysis layer imports this module): :func:`lingdiag.analysis.competence.join`
    for label log-likelihoods, ExpliCa's perplexity join with its ρ column; None where the suite
    has no competence conditions. ``lingdiag competence`` and the report's findings call it."""
    headline: str = ""
    """The key in ``metrics`` of the paper's headline metric: the report's summary shows it per
    model and condition (empty: the summary shows the headline table only)."""
    shows: tuple[str, ...] = ("thinking", "after_thinking")
    """Axes a run adds that this suite's table shows itself (every built-in table names the thinking
    setting and the replayed run of a condition); :meth:`tables` splits by any other."""
    headline_label: str = ""
    """The headline metric's name for readers (its table header, ``TBR_C (↓)``); empty: the key."""

    def axis(self, name: str) -> Axis:
        """The axis called ``name``."""
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def tables(self, rows: Sequence[ResultRow]) -> str:
        """The suite's table of ``rows``, once per setting of the axes a run added to its conditions
        (a plug-in axis such as a temperature sweep: axes this suite neither declares nor ``shows``)
        wherever a model's rows would otherwise be indistinguishable in it, each headed by its setting.

        A suite's table names the axes it knows; an axis added by the run is shown by this split, so
        no suite's table code has to know it.
        """
        own = {a.name for a in self.axes} | set(self.shows)
        added = sorted(k for k in {k for r in rows for k in r.axes if k not in own}
                       if len({str(r.axes.get(k, "")) for r in rows}) > 1)  # what varies: a constant tells nothing

        def setting(r: ResultRow) -> tuple[str, ...]:
            return tuple(str(r.axes.get(k, "")) for k in added)

        seen: dict[tuple[Any, ...], set[tuple[str, ...]]] = defaultdict(set)
        for r in rows:
            seen[(r.model, *sorted((k, str(v)) for k, v in r.axes.items() if k in own))].add(setting(r))
        if all(len(s) <= 1 for s in seen.values()):
            return self.table(rows)
        groups: dict[tuple[str, ...], list[ResultRow]] = defaultdict(list)
        for r in rows:
            groups[setting(r)].append(r)
        return "\n".join("**" + (", ".join(f"{k}: {v}" for k, v in zip(added, key, strict=True) if v) or
                                  "as the suite defines it") + "**\n\n" + self.table(members)
                         for key, members in groups.items())

    def condition_metrics(self, records: Sequence[ItemRecord]) -> dict[str, Any]:
        """The suite's metrics of one condition over its answered items, and the counts of all
        (``n``, ``n_unparsed``, ``n_errors``): an item the backend failed on is not a wrong answer.
        """
        return {**self.metrics([r for r in records if r.error is None]), **summary(records)}

    def parse_options(self, raw: Mapping[str, Any]) -> BaseModel:
        """Validate ``-o`` options; an unknown or mistyped one is a one-line ``ConfigError``."""
        return validate_options(self.options, raw, f"suite {self.name!r}")


def lazy(module: str, name: str) -> Callable[[], Any]:
    """A stub returning ``module.name`` imported on first call: a suite's commands (typer) load
    only when the CLI mounts them, so the library imports without typer.
    """

    def load() -> Any:
        return getattr(import_module(module), name)

    return load


SUITES: Registry[Suite] = Registry("suite")


def register_suite(suite: Suite) -> Suite:
    """Register ``suite`` under its name."""
    SUITES.register(suite.name)(suite)
    return suite


T = TypeVar("T")


def spread(items: Sequence[T], limit: int | None) -> list[T]:
    """``limit`` items evenly spaced over ``items`` (every group of an ordered file is hit): what
    ``--limit`` means on every command.

    Raises:
        ConfigError: a limit under 1.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1 (got {limit})")
    if limit is None or limit >= len(items):
        return list(items)
    step = len(items) / limit
    return [items[int(k * step)] for k in range(limit)]
