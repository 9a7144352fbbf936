"""A suite file → an ordinary ``Suite``: validated in full first (schema, templates, parsers,
metric and table references), every problem one line naming the file and the key path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lingdiag.errors import ConfigError, ConfigErrors, validation_lines
from lingdiag.io.limits import MAX_CONDITIONS
from lingdiag.metrics.core import summary
from lingdiag.prompts.formulas import ALL_REGIONS, Formula, FormulaError, parse
from lingdiag.prompts.surprisal import LABELS as REGION_LABELS
from lingdiag.prompts.surprisal import PASS
from lingdiag.records import Item
from lingdiag.scoring import policy_names
from lingdiag.suitefile.data import check_spec
from lingdiag.suitefile.metrics import Metrics
from lingdiag.suitefile.parsers import answer_language
from lingdiag.suitefile.schema import Formulation, MetricSpec, Regions, SuiteFile
from lingdiag.suitefile.source import read_yaml, suite_error
from lingdiag.suitefile.templates import Template, TemplateProblem, compile_template

SCORINGS = ("loglik", "sentences", "regions")
"""The formulation keys that make a condition a log-likelihood one (at most one per condition)."""
COUNTS = tuple(summary([]))
"""Counts every condition has, usable as table columns: n, n_unparsed, unparsed_rate, n_errors."""
NEEDS_LABELS = {"nli-label": "labels", "choice-letter": "options"}


class Options(BaseModel):
    """``-o`` options of every suite file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_new_tokens: int | None = Field(default=None, ge=1)
    """Overrides every condition's generation cap."""


def implied_gold(f: Formulation) -> str | None:
    """The gold a formulation implies: its first sentence's label, ``pass`` for regions, else None."""
    if f.sentences is not None:
        return next(iter(f.sentences))
    return PASS if f.regions is not None else None


def scores_text(f: Formulation) -> bool:
    """Whether the condition's requests score text under a scoring policy (not a chat prompt)."""
    return f.sentences is not None or f.regions is not None or (f.loglik is not None and f.loglik.context is not None)


def has_policy_axis(spec: SuiteFile, conditions: Sequence[Condition0]) -> bool:
    """Whether the file's suite has the ``scoring-policy`` axis: it names policies, or some condition
    scores whole sentences or regions (new formulations, so no earlier file's conditions change).
    """
    return spec.scoring_policy is not None or any(c.spec.sentences is not None or c.spec.regions is not None
                                                  for c in conditions)


class Problems:
    """The one-line problems of a file, gathered so that ``suite check`` lists every one at once.

    Each check runs inside :meth:`gather` once per unit it checks (a template, a condition, a
    metric, a table column): a unit's first problem is kept and the next unit is checked, so a new
    check slots in by raising :meth:`Compiled.fail` inside some unit's ``gather``.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []

    @contextmanager
    def gather(self) -> Iterator[None]:
        """Keep a ``ConfigError`` raised inside instead of letting it stop the checks."""
        try:
            yield
        except ConfigErrors as e:
            self.lines += e.problems
        except ConfigError as e:
            self.lines.append(str(e))

    def raise_any(self) -> None:
        """Raise what was gathered: one ``ConfigError``, or ``ConfigErrors`` listing several."""
        unique = list(dict.fromkeys(self.lines))
        if len(unique) == 1:
            raise ConfigError(unique[0])
        if unique:
            raise ConfigErrors(unique)


@dataclass(frozen=True)
class Condition0:
    """One merged condition of the file (before it meets data)."""

    name: str
    axes: dict[str, str]
    spec: Formulation
    where: str
    """The key path that names it in errors."""


class Compiled:
    """A validated suite file, with its templates compiled."""

    def __init__(self, path: Path, raw: bytes, spec: SuiteFile) -> None:
        self.path, self.raw, self.spec = path, raw, spec
        self.base = path.parent
        self.templates: dict[str, Template] = {}
        self.metrics = Metrics(spec.metrics)
        self.problems = Problems()

    def fail(self, where: str, message: str) -> ConfigError:
        """The one-line error at ``where``."""
        return suite_error(self.path, where, message)

    def report(self, where: str, message: str) -> None:
        """Gather the one-line error at ``where`` and go on checking."""
        self.problems.lines.append(str(self.fail(where, message)))

    # -- static checks ------------------------------------------------------------------
    def template(self, where: str, source: str, names: Sequence[str]) -> Template:
        """Compile (once) the template at ``where``."""
        if where not in self.templates:
            try:
                self.templates[where] = compile_template(source, names)
            except TemplateProblem as e:
                raise self.fail(where, str(e)) from None
        return self.templates[where]

    def each_template(self, where: str, source: str, names: Sequence[str]) -> None:
        """Compile the template at ``where``; a problem is gathered, not raised."""
        with self.problems.gather():
            self.template(where, source, names)

    def formulations(self) -> list[tuple[str, Formulation]]:
        """Every formulation with its key path."""
        out = [("defaults", self.spec.defaults)]
        return out + [(f"conditions.{a}.values.{v}", f) for a, axis in self.spec.conditions.items()
                      for v, f in axis.values.items()]

    def check_templates(self) -> None:
        """Compile every template against the item fields."""
        fields = self.spec.items.fields
        for where, f in self.formulations():
            for key in ("system", "user"):
                if getattr(f, key) is not None:
                    self.each_template(f"{where}.{key}", getattr(f, key), fields)
            if f.shots is not None:
                self.each_template(f"{where}.shots.answer", f.shots.answer, [*fields, "gold"])
                if f.shots.pool != "items" and (problem := check_spec(f.shots.pool)):
                    self.report(f"{where}.shots.pool", problem)
            if f.loglik is not None:
                if f.loglik.context is not None:
                    self.each_template(f"{where}.loglik.context", f.loglik.context, fields)
                for label, text in f.loglik.choices.items():
                    self.each_template(f"{where}.loglik.choices.{label}", text, fields)
            for label, text in (f.sentences or {}).items():
                self.each_template(f"{where}.sentences.{label}", text, fields)
            if f.regions is not None:
                for cond, contents in f.regions.conditions.items():
                    for k, text in enumerate(contents):
                        self.each_template(f"{where}.regions.conditions.{cond}.{k}", text, fields)
                for k, text in enumerate(f.regions.predictions):
                    with self.problems.gather():
                        self.formula(f"{where}.regions.predictions.{k}", text, [f.regions])

    def formula(self, where: str, text: str, layouts: Sequence[Regions]) -> Formula:
        """Parse the formula at ``where``; every region it reads exists in each of ``layouts``."""
        try:
            formula = parse(text)
        except FormulaError as e:
            raise self.fail(where, str(e)) from None
        for layout in layouts:
            for ref in formula.regions:
                contents = layout.conditions.get(ref.condition)
                if contents is None:
                    raise self.fail(where, f"formula reads unknown condition {ref.condition!r}; conditions: "
                                    f"{', '.join(layout.conditions)}")
                if ref.number != ALL_REGIONS and not 1 <= int(ref.number) <= len(contents):
                    raise self.fail(where, f"formula reads region {ref.number} of {ref.condition!r}, which has "
                                    f"regions 1-{len(contents)}")
        return formula

    def conditions(self) -> list[Condition0]:
        """Every combination of axis values, merged and checked for completeness."""
        axes = self.spec.conditions
        setters: dict[str, str] = {}
        for a, axis in axes.items():
            for v, f in axis.values.items():
                for key in f.model_fields_set:
                    owner = setters.setdefault(key, a)
                    if owner != a:
                        self.report(f"conditions.{a}.values.{v}.{key}",
                                    f"also set by axis {owner!r}; set each key in one axis (or in defaults)")
            for d in axis.default or ():
                if d not in axis.values:
                    self.report(f"conditions.{a}.default", f"{d!r} is not a value of the axis; "
                                f"values: {', '.join(axis.values)}")
        count = math.prod(len(axis.values) for axis in axes.values())
        if count > MAX_CONDITIONS.value:  # 40 two-valued axes are 2^40 conditions: refused before any is built
            raise self.fail("conditions", f"the axes expand to {count:,} conditions; {MAX_CONDITIONS.how_to_raise()}")
        out = []
        for combo in itertools.product(*[list(axis.values.items()) for axis in axes.values()]):
            with self.problems.gather():
                out.append(self._condition(combo))
        return out

    def _condition(self, combo: Sequence[tuple[str, Formulation]]) -> Condition0:
        """One combination of axis values, merged and checked."""
        axes = self.spec.conditions
        merged = self.spec.defaults.model_dump(exclude_unset=True)
        for _, f in combo:
            merged.update(f.model_dump(exclude_unset=True))
        names = dict(zip(axes, (v for v, _ in combo), strict=True))
        where = "conditions: " + ", ".join(f"{a}={v}" for a, v in names.items())
        spec = Formulation.model_validate(merged)
        ways = [k for k in SCORINGS if getattr(spec, k) is not None]
        if len(ways) > 1:
            raise self.fail(where, f"a condition is scored one way; {' and '.join(ways)} are both set "
                            "(set them in different values of one axis)")
        self.complete(spec, where)
        return Condition0("/".join(names.values()), names, spec, where)

    def complete(self, f: Formulation, where: str) -> None:
        """A condition has what its formulation needs."""
        if f.sentences is not None or f.regions is not None:
            return
        if f.loglik is not None:
            if f.loglik.context is None and f.user is None:
                raise self.fail(where, "loglik without context needs a user template (the chat prompt it follows)")
            return
        if f.user is None:
            raise self.fail(where, "no user template (set user in defaults or in an axis value), and no loglik")
        if f.parser is None:
            raise self.fail(where, "no parser; one of nli-label, rating, choice-letter, free-text")
        need = NEEDS_LABELS.get(f.parser)
        if need and not getattr(f, need):
            raise self.fail(where, f"parser {f.parser} needs {need}")
        if f.parser == "nli-label":
            try:
                answer_language(f)
            except ConfigError as e:
                raise self.fail(where, str(e)) from None

    def labels(self, conditions: Sequence[Condition0]) -> tuple[str, ...]:
        """The closed label set of the suite, or () when a condition's answers are open."""
        out: dict[str, None] = {}
        for c in conditions:
            f = c.spec
            labels = list(f.loglik.choices) if f.loglik else list(f.sentences) if f.sentences \
                else list(REGION_LABELS) if f.regions else list((f.options or {}).values()) \
                if f.parser == "choice-letter" else f.labels
            if not labels:
                return ()
            out.update(dict.fromkeys(labels))
        return tuple(out)

    def check_metrics(self, conditions: Sequence[Condition0], labels: Sequence[str]) -> None:
        """Every metric's tags, labels, formulas and references exist."""
        specs = self.spec.metrics
        layouts = [c.spec.regions for c in conditions if c.spec.regions is not None]
        for name, m in specs.items():
            with self.problems.gather():
                self.check_metric(name, m, conditions, labels, layouts)

    def check_metric(self, name: str, m: MetricSpec, conditions: Sequence[Condition0], labels: Sequence[str],
                     layouts: Sequence[Regions]) -> None:
        """One metric's tags, labels, formulas and references exist."""
        tags, items, specs = self.spec.items.tags, self.spec.items, self.spec.metrics
        where = f"metrics.{name}"
        share, kind = m.share, m.kind
        if share is not None:
            for tag, values in share.where.items():
                if tag not in tags:
                    raise self.fail(f"{where}.{kind}.where.{tag}",
                                    f"unknown tag; tags: {', '.join(tags) or '(none declared)'}")
                mapped = tags[tag].map
                for v in [values] if isinstance(values, str) else values:
                    if mapped is not None and v not in mapped.values():
                        raise self.fail(f"{where}.{kind}.where.{tag}", f"no {tag} {v!r}; values: "
                                        f"{', '.join(sorted(set(mapped.values())))}")
            if share.by is not None and share.by not in tags:
                raise self.fail(f"{where}.{kind}.by", f"unknown tag {share.by!r}; tags: {', '.join(tags)}")
        if m.accuracy is not None and items.gold is None and \
                any(implied_gold(c.spec) is None for c in conditions):
            raise self.fail(f"{where}.accuracy", "accuracy needs items.gold (or only sentences/regions "
                            "conditions, whose gold is implied)")
        if m.prediction is not None:
            if not layouts:
                raise self.fail(f"{where}.prediction", "a prediction reads region surprisals; no condition "
                                "has regions")
            self.formula(f"{where}.prediction.formula", m.prediction.formula, layouts)
        if m.rate is not None and labels and m.rate.label not in labels:
            raise self.fail(f"{where}.rate.label", f"unknown label {m.rate.label!r}; labels: {', '.join(labels)}")
        if m.difference is not None:
            for k, other in enumerate(m.difference):
                o = specs.get(other)
                if o is None:
                    raise self.fail(f"{where}.difference.{k}", f"unknown metric {other!r}; metrics: "
                                    f"{', '.join(specs)}")
                if o.share is None or o.share.by is not None:
                    raise self.fail(f"{where}.difference.{k}", f"{other!r} is not an accuracy, rate or "
                                    "prediction over one subset; a difference takes two")
        if m.correlation is not None:
            if m.correlation.column not in (*items.fields, *tags):
                raise self.fail(f"{where}.correlation.column", f"unknown column {m.correlation.column!r}; "
                                f"fields and tags: {', '.join([*items.fields, *tags])}")
            if m.paired:
                raise self.fail(f"{where}.paired", "a correlation is not a count metric; compare cannot "
                                "permute it")
        if m.paired and share is not None and share.by is not None:
            raise self.fail(f"{where}.paired", "a metric per tag value cannot be paired; use where")

    def check_policies(self, conditions: Sequence[Condition0]) -> None:
        """``scoring_policy`` names presets, in a file where some condition scores text."""
        chosen = self.spec.scoring_policy
        if chosen is None:
            return
        names = policy_names()
        for k, name in enumerate(chosen):
            if name not in names:
                self.report(f"scoring_policy.{k}", f"unknown scoring policy {name!r}; valid: {', '.join(names)}")
        if not any(scores_text(c.spec) for c in conditions):
            self.report("scoring_policy", "no condition scores text (sentences, regions, or loglik with a "
                        "context); a chat prompt's tokens are its template's")

    def check_table(self) -> None:
        """Table columns name metrics (or counts), rows name axes."""
        table = self.spec.table
        if table is None:
            return
        for k, col in enumerate(table.columns):
            m = self.spec.metrics.get(col.metric)
            if col.metric not in COUNTS and m is None:
                self.report(f"table.columns.{k}.metric", f"unknown metric {col.metric!r}; metrics: "
                            f"{', '.join([*self.spec.metrics, *COUNTS])}")
            if m is not None and m.share is not None and m.share.by is not None:
                self.report(f"table.columns.{k}.metric", f"{col.metric!r} is a mapping per tag value, "
                            "not a cell")
        for k, axis in enumerate(table.rows or ()):
            if axis not in self.spec.conditions:
                self.report(f"table.rows.{k}", f"unknown axis {axis!r}; axes: {', '.join(self.spec.conditions)}")
        for k, b in enumerate(table.breakdowns):
            m = self.spec.metrics.get(b.metric)
            if m is None or m.share is None or m.share.by is None:
                per_tag = [n for n, x in self.spec.metrics.items() if x.share is not None and x.share.by is not None]
                self.report(f"table.breakdowns.{k}.metric", f"{b.metric!r} is not a metric declared with by; "
                            f"those are: {', '.join(per_tag) or '(none)'}")

    def check_figures(self) -> None:
        """Figures name metrics of the file (or counts)."""
        for k, f in enumerate(self.spec.figures or ()):
            if f.metric not in self.spec.metrics and f.metric not in COUNTS:
                self.report(f"figures.{k}.metric", f"unknown metric {f.metric!r}; metrics: "
                            f"{', '.join([*self.spec.metrics, *COUNTS])}")

    def check_groups(self, items: Sequence[Item]) -> None:
        """Each tag value a metric selects occurs in ``items`` (``suite check``: a typo'd group is not
        an empty rate; a run on a subset without the group gets NaN, as a built-in suite's does).
        """
        for name, m in self.spec.metrics.items():
            share = m.share
            if share is None:
                continue
            for tag, values in share.where.items():
                seen = {str(it.tags.get(tag)) for it in items}
                for v in [values] if isinstance(values, str) else values:
                    if v not in seen:
                        self.report(f"metrics.{name}.{m.kind}.where.{tag}",
                                      f"no item has {tag} {v!r}; values: {', '.join(sorted(seen))}")

    def check_data_specs(self) -> None:
        """Data specs are files of a known format or well-formed ``hf:`` specs."""
        items = self.spec.items
        for where, spec in [("items.data", items.data),
                            *[(f"items.datasets.{k}.path", s.path) for k, s in items.datasets.items()]]:
            if problem := check_spec(spec):
                self.report(where, problem)


class _TextBooleans(yaml.SafeLoader):
    """YAML with every bare boolean kept as the text it was written as (``yes`` stays ``yes``)."""


def _as_written(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(node.value)


_TextBooleans.add_constructor("tag:yaml.org,2002:bool", _as_written)


def _validate(path: Path, data: dict[str, Any], raw: bytes) -> tuple[SuiteFile, list[str]]:
    """The file's schema and the problems it already has. When every schema problem is a bare
    boolean where text belongs (``labels: [yes, no]``), each is reported and the checks go on with
    the booleans read as the text they were written as, so that they hide none of the file's other problems.
    """
    try:
        return SuiteFile.model_validate(data), []
    except ValidationError as e:
        lines = validation_lines(e, path)
        failed = ConfigErrors(lines) if len(lines) > 1 else ConfigError(lines[0])
        if not all(isinstance(error["input"], bool) for error in e.errors()):
            raise failed from None
        try:
            # The text already passed read_yaml's size and depth checks.
            return SuiteFile.model_validate(yaml.load(raw.decode("utf-8-sig"), Loader=_TextBooleans)), lines
        except ValidationError:
            raise failed from None


def compile_file(path: Path, taken: Sequence[str] = ()) -> tuple[Compiled, list[Condition0], tuple[str, ...]]:
    """Read and check ``path`` (no data read); ``taken``: names the file's suite may not have."""
    data, raw = read_yaml(path)
    if not isinstance(data, dict):
        raise suite_error(path, "", f"expected a mapping with name, items, conditions, metrics; "
                          f"found {type(data).__name__}")
    spec, booleans = _validate(path, data, raw)
    c = Compiled(path, raw, spec)
    c.problems.lines += booleans
    if spec.name in taken:
        c.report("name", f"{spec.name!r} is a built-in suite's name; choose another")
    c.check_data_specs()
    c.check_templates()
    conditions = c.conditions()
    c.check_policies(conditions)
    labels = c.labels(conditions)
    c.check_metrics(conditions, labels)
    c.check_table()
    c.check_figures()
    c.problems.raise_any()
    return c, conditions, labels
