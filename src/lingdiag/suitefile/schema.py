"""The suite file format as pydantic models that mirror its sections, so that an error names
the key path (``conditions.strategy.values.dap.user``). ``docs/suites.md`` is the reference.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

ParserName = Literal["nli-label", "rating", "choice-letter", "free-text"]
LanguageTag = Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")]
"""A BCP 47 language tag (``ru``, ``pt-BR``, ``zh-Hant``)."""
Words = list[Annotated[str, Field(min_length=1)]]
"""lingdiag's answer parsers a generation condition can choose (``lingdiag.suitefile.parsers``)."""


class Strict(BaseModel):
    """A section: unknown keys are refused with the valid ones (and the closest) named."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            valid = sorted(f.alias or name for name, f in cls.model_fields.items())
            for key in data:
                if key not in valid:
                    close = difflib.get_close_matches(str(key), valid, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise PydanticCustomError("unknown_key", "unknown key{hint}; valid keys: {valid}",
                                              {"key": str(key), "hint": hint, "valid": ", ".join(valid)})
        return data


def _column_shorthand(value: Any) -> Any:
    return {"column": value} if isinstance(value, str) else value


class Source(Strict):
    """A named dataset of the file (``--dataset NAME``)."""

    path: str
    """A file relative to the suite file, ``cache:LOCAL`` (lingdiag's datasets cache, where
    ``lingdiag data fetch`` puts official files), or ``hf:owner/name[:split]``."""
    sha256: str | None = Field(default=None, pattern="^[0-9a-f]{64}$")
    """The file's SHA-256, checked on every load."""
    fetch: str | None = None
    """The suite whose ``lingdiag data fetch`` downloads a ``cache:`` file (named in the error when it is absent)."""


class TagSpec(Strict):
    """An item tag: a column, optionally with its values mapped (``A_Interrupted_Accomplishment: A``)."""

    column: str
    map: dict[str, str] | None = None
    """Column value → tag value; a value missing from the map is a data error."""


class Items(Strict):
    """Where the items are and which columns are what."""

    data: str
    """The default dataset: a path relative to the suite file (CSV, TSV, JSON list or JSONL), or
    ``hf:owner/name[:split]`` (needs ``lingdiag[datasets]``)."""
    datasets: dict[str, Source] = Field(default_factory=dict)
    """More datasets by name, e.g. ``official``."""
    id: str = "id"
    """The column holding each item's unique id."""
    fields: list[str] = Field(min_length=1)
    """The columns templates may use."""
    tags: dict[str, TagSpec] = Field(default_factory=dict)
    """Tag name → column (or ``{column, map}``): what metrics group items by."""
    gold: str | None = None
    """The column holding the gold label (none: the items have no gold)."""
    delimiter: Literal[",", ";", "\t"] | None = None
    """A CSV file's delimiter where the header line does not tell (``;``, as spreadsheets in
    many locales save CSV); default: tab if the header has one, else comma."""
    review: list[str] | None = Field(default=None, min_length=2, max_length=2)
    """Two of ``fields`` a human study shows raters (``lingdiag human export FILE --study quality``:
    native speakers checking the items)."""

    @model_validator(mode="after")
    def _review_is_fields(self) -> Items:
        for f in self.review or ():
            if f not in self.fields:
                raise PydanticCustomError("review", "review names {f!r}, not one of fields: {fields}",
                                          {"f": f, "fields": ", ".join(self.fields)})
        return self

    @model_validator(mode="before")
    @classmethod
    def _tag_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("tags"), dict):
            data = {**data, "tags": {k: _column_shorthand(v) for k, v in data["tags"].items()}}
        return data


class Shots(Strict):
    """In-context examples drawn per item from a pool."""

    n: int = Field(ge=1)
    pool: str = "items"
    """``items`` (the other test items) or a data file with the same columns, relative to the suite file."""
    seed: int | None = None
    """Seeds the draw; default the run's ``--seed``."""
    answer: str = "{{ gold }}"
    """Template of an example's answer turn (fields and ``gold``)."""


class Loglik(Strict):
    """Choice among continuations by log-likelihood."""

    choices: dict[str, str] = Field(min_length=2)
    """Label → continuation template; the highest-scoring label is the answer (the first wins a tie)."""
    context: str | None = None
    """A text template scored before each continuation; none: the condition's chat prompt
    (``system``/``user``), the continuation being the first words of the answer."""
    normalisation: Literal["total", "per-token"] = "total"


class Regions(Strict):
    """Region scoring (SyntaxGym): each sentence variant of an item scored token by token, its
    regions' surprisals summed, and the predictions checked; the answer is ``pass`` when all hold.
    """

    conditions: dict[str, Annotated[list[str], Field(min_length=1)]] = Field(min_length=1)
    """SyntaxGym condition (a sentence variant, not one of the file's conditions) → its regions'
    templates, numbered 1, 2, … in order; the sentence is the regions joined by single spaces."""
    predictions: list[str] = Field(min_length=1)
    """Formulas over region surprisals, e.g. ``(3;%mismatch%) > (3;%match%)`` (``lingdiag.prompts.formulas``)."""


class Formulation(Strict):
    """One axis value (or the file's ``defaults``): part of a condition's prompt and answer format.

    A condition is the defaults and one value of every axis merged; two axes may not set the same key.
    """

    system: str | None = None
    """System turn template."""
    user: str | None = None
    """User turn template over the item's fields (jinja2, sandboxed)."""
    labels: list[str] | None = None
    """The answers a parser may return (quote ``"True"``: bare YAML True is a boolean)."""
    parser: ParserName | None = None
    aliases: dict[str, str] | None = None
    """``nli-label``: more surface forms → label."""
    json_key: str | None = None
    """``nli-label``: the key holding the label in a JSON answer (default ``label``)."""
    options: dict[str, str] | None = None
    """``choice-letter``: letter → label, as the prompt lists them."""
    language: LanguageTag | None = None
    """The language of the prompt and its answers, any BCP 47 tag. ``nli-label``
    (``lingdiag.parse.labels``): its answer cue words, copulas, negations, labels found in
    unsegmented scripts, NFKC normalisation (default ``en``, English as always); a language
    lingdiag has no words for needs at least ``cues`` and ``negations`` here. The label words in
    that language go in ``aliases``. ``regions`` in a script without spaces (``zh``, ``ja``): the
    regions are joined by nothing, not by spaces."""
    cues: Words | None = None
    """``nli-label`` and ``choice-letter``: more words that introduce the answer (``Urteil``), beside the
    language's own. The kinds of words below are the reader's (``lingdiag.parse.language``); each is
    added to the language's own, and every built-in language's words are read too."""
    copulas: Words | None = None
    """``nli-label``: more words joining a cue to its label (``ist``), beside ``:`` and ``=``."""
    negations: Words | None = None
    """``nli-label``: more words that deny a label (``не``), matched as words."""
    questions: Words | None = None
    """``nli-label``: more words that question or hedge a label in its clause (``ли``)."""
    reasons: Words | None = None
    """``nli-label``: more words that open a reason after a label (``потому``)."""
    particles: Words | None = None
    """``nli-label``: what may follow a label in a script without spaces (``的``, ``です``)."""
    subjects: Words | None = None
    """What may be said to be a label when the label ends its clause (``гипотеза``: ``The hypothesis is true.``)."""
    hedges: Words | None = None
    """More words that hedge a label in its clause (``возможно``)."""
    conditions: Words | None = None
    """More words that make a label conditional (``если``)."""
    contrasts: Words | None = None
    """More words that qualify a label right after it (``но``)."""
    retractions: Words | None = None
    """More words that take back what came before (``вернее``)."""
    doubts: Words | None = None
    """More phrases of the speaker's doubt anywhere in an answer (``не уверен``)."""
    judgements: Words | None = None
    """More words that judge a label wrong or unlikely (``неправильно``)."""
    affirmations: Words | None = None
    """More words that confirm a label (``правильно``, ``нет сомнений``)."""
    joiners: Words | None = None
    """More words that join labels into a list (``или``)."""
    items: Words | None = None
    """More words that open an invented next item at a line's start (``Посылка``)."""
    determiners: Words | None = None
    """More words before a noun, after which a label word is an adjective (``a``, ``the``)."""
    revisions: Words | None = None
    """More words that open a revision of the answer before them (``впрочем``, ``на самом деле``)."""
    drafts: Words | None = None
    """More words that introduce a draft answer a later one supersedes (``первоначальный ответ``)."""
    max_new_tokens: int | None = Field(default=None, ge=1)
    shots: Shots | None = None
    loglik: Loglik | None = None
    sentences: dict[str, str] | None = Field(default=None, min_length=2)
    """Whole-sentence scoring: label → sentence template, each scored whole under the scoring
    policy; the likeliest sentence's label is the answer. The first is the expected one (the gold
    when ``items.gold`` is not set) and must be strictly likelier (BLiMP's rule)."""
    regions: Regions | None = None


class AxisSpec(Strict):
    """A condition dimension, selected on the command line (``--strategy zero-shot,dap``)."""

    help: str = ""
    default: list[str] | None = None
    """Values run when none is named; default all."""
    values: dict[str, Formulation] = Field(min_length=1)


class Accuracy(Strict):
    """Share correct of the items with a gold label (unparsed answers are wrong)."""

    where: dict[str, str | list[str]] = Field(default_factory=dict)
    """Tag → value(s): the items counted."""
    by: str | None = None
    """A tag: the metric per value of it (a mapping; not a table column or a paired metric)."""


class Rate(Strict):
    """Share of the items answered ``label`` (unparsed answers count in the denominator)."""

    label: str
    where: dict[str, str | list[str]] = Field(default_factory=dict)
    by: str | None = None


class Correlation(Strict):
    """Correlation of the model's numeric answer with a data column, over the answered items."""

    column: str
    """A field or tag holding a number per item."""
    method: Literal["spearman", "pearson"] = "spearman"
    score: Literal["label", "rating"] = "label"
    """The model side: the label read as a number, or the ``rating`` parser's rating."""


class PredictionRate(Strict):
    """Share of the items whose region surprisals satisfy ``formula`` (items scored by ``regions``)."""

    formula: str
    """A formula over the regions and conditions of the file's ``regions``, e.g. ``(3;%match%) < (3;%mismatch%)``."""
    where: dict[str, str | list[str]] = Field(default_factory=dict)
    by: str | None = None


KINDS = ("accuracy", "rate", "prediction", "difference", "correlation")
"""The kinds of metric a file may declare (one per metric)."""


class MetricSpec(Strict):
    """Exactly one of ``accuracy``, ``rate``, ``prediction``, ``difference``, ``correlation``."""

    accuracy: Accuracy | None = None
    rate: Rate | None = None
    prediction: PredictionRate | None = None
    difference: list[str] | None = Field(default=None, min_length=2, max_length=2)
    """Two metric names: the first minus the second."""
    correlation: Correlation | None = None
    paired: bool = False
    """Test it by paired permutation in ``lingdiag compare`` (accuracies, rates and their differences)."""

    @model_validator(mode="before")
    @classmethod
    def _formula_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("prediction"), str):
            data = {**data, "prediction": {"formula": data["prediction"]}}
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> MetricSpec:
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise PydanticCustomError("metric_kind", "a metric has exactly one of {kinds} (found {found})",
                                      {"kinds": ", ".join(KINDS), "found": ", ".join(kinds) or "none"})
        return self

    @property
    def kind(self) -> str:
        """Which of ``KINDS`` it is."""
        return next(k for k in KINDS if getattr(self, k) is not None)

    @property
    def share(self) -> Accuracy | Rate | PredictionRate | None:
        """The accuracy, rate or prediction rate it is (a share of a subset), or None."""
        return self.accuracy or self.rate or self.prediction


class Column(Strict):
    """A table column."""

    metric: str
    """A metric of the file, or a count every condition has: n, n_unparsed, unparsed_rate, n_errors."""
    header: str | None = None


class Breakdown(Strict):
    """A metric declared with ``by: TAG`` shown as a table of its own below the main one, with intervals."""

    metric: str
    """An accuracy, rate or prediction of the file with ``by``."""
    layout: Literal["rows", "columns"] = Field(default="columns", alias="as")
    """``columns``: one column per tag value beside each condition and model; ``rows``: one row per
    tag value, one column per condition and model."""
    header: str | None = None
    """The table's heading (default: the metric's name)."""


class Table(Strict):
    """The markdown table of a run (``table.md``, ``lingdiag report``)."""

    caption: str = ""
    rows: list[str] | None = None
    """Axes that make the row labels (besides the model); default every axis."""
    columns: list[Column] = Field(min_length=1)
    breakdowns: list[Breakdown] = Field(default_factory=list)
    """Metrics per tag value, each a table below the main one (``by`` metrics are not cells)."""

    @model_validator(mode="before")
    @classmethod
    def _column_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in ("columns", "breakdowns"):
                if isinstance(data.get(key), list):
                    data = {**data, key: [{"metric": c} if isinstance(c, str) else c for c in data[key]]}
        return data


class FigureSpec(Strict):
    """A figure of the HTML report: a metric per condition and model with its intervals; a metric
    declared with ``by`` per tag value (one panel per condition).
    """

    metric: str
    title: str | None = None


class SuiteFile(Strict):
    """A whole suite file."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    """The suite's name in tables and run directories (lowercase letters, digits, ``.``, ``_``, ``-``)."""
    description: str = ""
    items: Items
    defaults: Formulation = Formulation()
    conditions: dict[str, AxisSpec] = Field(min_length=1)
    scoring_policy: list[str] | None = Field(default=None, min_length=1)
    """The scoring policies run when ``--scoring-policy`` is not given (default ``lingdiag``);
    files with ``sentences`` or ``regions`` conditions have the axis anyway (``lingdiag.scoring``)."""
    metrics: dict[str, MetricSpec] = Field(default_factory=dict)
    table: Table | None = None
    figures: list[FigureSpec] | None = None
    """The report's figures (default: the table's first metric column and each breakdown)."""

    @model_validator(mode="before")
    @classmethod
    def _figure_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("figures"), list):
            data = {**data, "figures": [{"metric": f} if isinstance(f, str) else f for f in data["figures"]]}
        return data
