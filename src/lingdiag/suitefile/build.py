"""The ``Suite`` of a checked suite file: loader, conditions, metrics and table, so the engine
(run, resume, cache, shards, compare, report, ``data stats``) needs no special case.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from lingdiag.analysis import sweep
from lingdiag.analysis.competence import CompetenceJoin, answered, by_condition, pair, run_records, to_markdown
from lingdiag.conditions import after_thinking, scoring_policy, thinking
from lingdiag.figures import Figure, ModelColours
from lingdiag.io.markdown import markdown_table
from lingdiag.prompts.formulas import parse
from lingdiag.records import Item, ItemRecord, Prediction, ResultRow
from lingdiag.rundir import SuiteSource
from lingdiag.scoring import LINGDIAG, UNSPACED_LANGUAGES, ScoringPolicy, policy, policy_names
from lingdiag.suite import Axis, Condition, Dataset, ItemView, Suite
from lingdiag.suitefile.choice import ContinuationChoice, RegionPredictions, SentenceChoice
from lingdiag.suitefile.data import read_rows, to_items
from lingdiag.suitefile.figures import breakdown_table, declared, figures
from lingdiag.suitefile.load import COUNTS, SCORINGS, Compiled, Condition0, Options, has_policy_axis, implied_gold
from lingdiag.suitefile.parsers import PARSERS, AnswerFormat, answer_language
from lingdiag.suitefile.prompt import ShotDraw, TemplatePrompt
from lingdiag.suitefile.schema import Formulation
from lingdiag.suitefile.templates import Template

Strategy = TemplatePrompt | ContinuationChoice | SentenceChoice | RegionPredictions
POOLS = "pools"
LANGUAGE = "language"
"""The item tag of an item's language, where a file holds aligned translations."""
"""``Dataset.extras`` key: shot pool file → its items."""


def answer_format(f: Formulation) -> tuple[str, AnswerFormat]:
    """The parser a condition names and what it reads answers with."""
    return f.parser or "free-text", AnswerFormat(tuple(f.labels or ()), tuple(sorted((f.aliases or {}).items())),
                                                 f.json_key or "label", tuple((f.options or {}).items()),
                                                 answer_language(f))


class FileSuite:
    """The pieces of the ``Suite`` a checked file describes."""

    def __init__(self, compiled: Compiled, conditions: Sequence[Condition0], labels: tuple[str, ...]) -> None:
        self.c, self.conds, self.labels = compiled, list(conditions), labels
        self.policy_axis = has_policy_axis(compiled.spec, conditions)

    def load(self, spec: str) -> Dataset:
        """Dataset ``spec``: ``builtin``/``default`` (the file's ``items.data``), a name under
        ``items.datasets``, or a path / ``hf:`` spec given on the command line.
        """
        items_spec = self.c.spec.items
        rows, source, where = read_rows(spec, items_spec, self.c.base)
        items = to_items(rows, items_spec, where, self.labels)
        pools: dict[str, list[Item]] = {}
        for c in self.conds:
            shots = c.spec.shots
            if shots is not None and shots.pool != "items" and shots.pool not in pools:
                prows, psource, pwhere = read_rows("default", items_spec.model_copy(update={"data": shots.pool}),
                                                   self.c.base)
                pools[shots.pool] = to_items(prows, items_spec, pwhere, self.labels)
                source.update(psource)
        return Dataset(spec, items, {POOLS: pools}, source)

    def strategy(self, c: Condition0, dataset: Dataset, options: Options, seed: int, scoring: ScoringPolicy
                 ) -> Strategy:
        """The strategy of condition ``c``; ``scoring``: the policy its text log-likelihoods follow."""
        f, where = c.spec, c.where
        if f.sentences is not None:
            return SentenceChoice({label: self._template(c, f"sentences.{label}") for label in f.sentences}, scoring)
        if f.regions is not None:
            layout = f.regions
            return RegionPredictions(
                {cond: tuple(self._template(c, f"regions.conditions.{cond}.{k}") for k in range(len(contents)))
                 for cond, contents in layout.conditions.items()},
                tuple(parse(text) for text in layout.predictions), scoring,
                "" if f.language in UNSPACED_LANGUAGES else " ")
        prompt = None
        if f.user is not None:
            shots = None
            if f.shots is not None:
                pool = dataset.items if f.shots.pool == "items" else dataset.extras[POOLS][f.shots.pool]
                shots = ShotDraw(f.shots.n, tuple(pool), f.shots.seed if f.shots.seed is not None else seed,
                                 self._template(c, "shots.answer"))
            parser, fmt = answer_format(f)
            prompt = TemplatePrompt(self._template(c, "system") if f.system is not None else None,
                                    self._template(c, "user"), parser, fmt,
                                    options.max_new_tokens or f.max_new_tokens or 512, shots)
        if f.loglik is None:
            assert prompt is not None, where
            return prompt
        choices = {label: self._template(c, f"loglik.choices.{label}") for label in f.loglik.choices}
        context = self._template(c, "loglik.context") if f.loglik.context is not None else None
        return ContinuationChoice(choices, f.loglik.normalisation, context, prompt, scoring)

    def _template(self, c: Condition0, key: str) -> Template:
        """The compiled template ``key`` of ``c``: from the axis value that set it, else the defaults."""
        for a, v in c.axes.items():
            where = f"conditions.{a}.values.{v}.{key}"
            if where in self.c.templates:
                return self.c.templates[where]
        return self.c.templates[f"defaults.{key}"]

    def parse_answer(self) -> Callable[[str], Prediction] | None:
        """Outside answer → label by the parser and format every generation condition shares
        (``lingdiag suite score``); None where they differ or none generates.
        """
        formats = {answer_format(c.spec) for c in self.conds if not any(getattr(c.spec, k) for k in SCORINGS)}
        if len(formats) != 1:
            return None
        ((parser, fmt),) = formats
        return lambda text: Prediction(*PARSERS[parser](text, fmt))

    def conditions(self, dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Options,
                   seed: int) -> list[Condition]:
        """The selected combinations, in axis-value order (then scoring policy, where the file has the axis)."""
        out = []
        for c in self.conds:
            if not all(v in axes[a] for a, v in c.axes.items()):
                continue
            gold = implied_gold(c.spec)
            items = dataset.items if gold is None or self.c.spec.items.gold is not None else \
                [replace(it, gold=gold) for it in dataset.items]
            if c.spec.language is not None and any(LANGUAGE in it.tags for it in items):
                # Aligned translations: a condition in one language runs that language's items.
                items = [it for it in items if it.tags.get(LANGUAGE) == c.spec.language]
            if not self.policy_axis:
                out.append(Condition(c.name, c.axes, self.strategy(c, dataset, options, seed, LINGDIAG), items))
                continue
            for p in scoring_policy.chosen(dict(axes)):
                out.append(Condition(f"{c.name}/{p.name}", {**c.axes, scoring_policy.AXIS: p.name},
                                     self.strategy(c, dataset, options, seed, p), items))
        return out

    def metrics(self, records: Sequence[ItemRecord]) -> dict[str, Any]:
        """The file's metrics of one condition; with the scoring-policy axis also its per-item
        outcomes, from which the table tells how many items flip between policies.
        """
        out = self.c.metrics(records)
        if self.policy_axis:
            out[sweep.OUTCOMES] = sweep.outcomes(records)
        return out

    def table(self, rows: Sequence[ResultRow]) -> str:
        """The file's table: one row per condition and model, its columns in its order. With the
        scoring-policy axis: the policies described above it, a column for it, and the sweep below.
        """
        spec = self.c.spec
        axes = list(spec.conditions)
        row_axes = list(spec.table.rows if spec.table and spec.table.rows is not None else axes)
        order = {a: {v: k for k, v in enumerate(spec.conditions[a].values)} for a in axes}
        rows = sorted(rows, key=lambda r: (*[order[a].get(str(r.axes.get(a)), 99) for a in axes], r.model))
        columns = spec.table.columns if spec.table else []
        policies: list[str] = []
        if self.policy_axis:
            row_axes.append(scoring_policy.AXIS)
            policies = list(dict.fromkeys(str(r.axes.get(scoring_policy.AXIS)) for r in rows))
        # The axes every suite takes from the run (thinking settings, scoring after thinking) get a
        # column where the rows have them, or their conditions would read as the same row.
        row_axes += [a for a in (thinking.AXIS, after_thinking.AXIS) if any(a in r.axes for r in rows)]
        header = [*(a.capitalize() for a in row_axes), "Model", *(col.header or col.metric for col in columns)]
        body = [[*(str(r.axes.get(a, "")) for a in row_axes), r.model, *(r.metrics.get(col.metric) for col in columns)]
                for r in rows]
        caption = spec.table.caption if spec.table and spec.table.caption else spec.name
        described = "".join(f"> {policy(p).describe()}\n" for p in policies if p in policy_names())
        headline = next((col for col in columns if col.metric not in COUNTS), None)
        sweep_section = sweep.section(rows, headline.metric, headline.header or headline.metric) \
            if headline is not None and len(policies) > 1 else ""
        breakdowns = "".join("\n" + breakdown_table(b, self._by(b.metric), rows, row_axes)
                             for b in (spec.table.breakdowns if spec.table else ()))
        return f"## {caption}\n\n" + (described + "\n" if described else "") + markdown_table(header, body) \
            + breakdowns + ("\n" + sweep_section if sweep_section else "")

    def _by(self, metric: str) -> str:
        share = self.c.spec.metrics[metric].share
        assert share is not None and share.by is not None, metric  # checked with the file
        return share.by

    def figures(self, rows: Sequence[ResultRow], colours: ModelColours) -> list[Figure]:
        """The figures the file declares (its defaults without ``figures``)."""
        return figures(self.c.spec, rows, colours)

    def competence(self, model: str, records: Sequence[ItemRecord], *, seed: int = 0) -> list[CompetenceJoin]:
        """Each ``loglik`` condition against every generation condition that differs from it in one
        axis only (the built-in suites' twin: the same prompt, answered instead of scored).
        """
        kinds = {tuple(sorted(c.axes.items())): c.spec for c in self.conds}
        by = by_condition(records)

        def spec(condition: str) -> Formulation:
            axes = by[condition][0].axes
            return kinds[tuple(sorted((a, str(axes.get(a))) for a in self.c.spec.conditions))]

        def differ(a: str, b: str) -> int:
            x, y = by[a][0].axes, by[b][0].axes
            return sum(str(x.get(k)) != str(y.get(k)) for k in {*x, *y})

        scored = [c for c in by if spec(c).loglik is not None]
        asked = [c for c in by if not any(getattr(spec(c), k) for k in SCORINGS)]
        out = []
        for ll in scored:
            loglik = spec(ll).loglik
            assert loglik is not None
            for g in asked:
                if differ(ll, g) == 1 and (j := pair(model, g, ll, answered(by[ll]), answered(by[g]),
                                                     normalisation=loglik.normalisation, seed=seed)):
                    out.append(j)
        return out

    def has_competence(self) -> bool:
        """Whether some condition scores the labels by log-likelihood and another generates them."""
        return any(c.spec.loglik is not None for c in self.conds) and \
            any(not any(getattr(c.spec, k) for k in SCORINGS) for c in self.conds)

    def analyses(self, rows: Sequence[ResultRow]) -> str:
        """The report's competence-vs-performance section (every run holding a twin pair)."""
        joined = [j for model, records in run_records(rows, lambda rs: True)
                  for j in self.competence(model, records)]
        return to_markdown(joined, self.c.spec.name) if joined else ""

    def headline(self) -> tuple[str, str]:
        """The table's first metric column and its header (the report's summary shows it per model
        and condition, under that header).
        """
        table = self.c.spec.table
        column = next((c for c in table.columns if c.metric not in COUNTS), None) if table else None
        return (column.metric, column.header or column.metric) if column else ("", "")


def suite_of(compiled: Compiled, conditions: Sequence[Condition0], labels: tuple[str, ...]) -> Suite:
    """The ``Suite`` of a checked file."""
    fs = FileSuite(compiled, conditions, labels)
    spec = compiled.spec
    axes = tuple(Axis(a, tuple(ax.values), tuple(ax.default or ax.values), ax.help)
                 for a, ax in spec.conditions.items())
    if fs.policy_axis:
        axes += (scoring_policy.axis(*(spec.scoring_policy or ())),)
    source = SuiteSource(str(compiled.path), hashlib.sha256(compiled.raw).hexdigest(), compiled.raw.decode("utf-8-sig"))
    headline, headline_label = fs.headline()
    return Suite(
        name=spec.name, description=spec.description or f"suite file {compiled.path}", axes=axes,
        load=fs.load, conditions=fs.conditions, metrics=fs.metrics, table=fs.table, labels=labels,
        options=Options, stat_tags=tuple(spec.items.tags), default_dataset="builtin",
        paired_metrics=compiled.metrics.paired(), source=source, headline=headline,
        headline_label=headline_label,
        figures=fs.figures if declared(spec) else None,
        competence=fs.competence if fs.has_competence() else None,
        analyses=fs.analyses if fs.has_competence() else None,
        view=ItemView(halves=(spec.items.review[0], spec.items.review[1])) if spec.items.review else None,
        # Answers produced elsewhere are read as the conditions read theirs, where all read them alike.
        parse_answer=fs.parse_answer(),
    )

