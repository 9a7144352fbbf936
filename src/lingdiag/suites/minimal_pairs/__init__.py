"""Minimal pairs (BLiMP, SLING, CLAMS as published): the good sentence should be the likelier one.

``lingdiag run minimal-pairs --dataset PATH|DIR|FORMAT:PATH|blimp|sling|clams`` reads the files as
published (``formats``: the one field mapping); pairs with identical or empty sentences are
excluded, counted and listed, never scored.
Two methods (BLiMP §3): ``simple`` scores both whole sentences; ``one-prefix`` scores the
two critical words after their shared prefix (only the pairs BLiMP marks for it). Every
request follows the condition's scoring policy (``--scoring-policy``, ``lingdiag.scoring``).
A pair is right when the good text's log-probability is strictly higher (BLiMP's rule).

Modules: ``files`` (BLiMP's official files and the loader), ``data`` (the JSONL as published).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, cast

from lingdiag.analysis import sweep
from lingdiag.conditions import scoring_policy
from lingdiag.errors import ConfigError
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import Counts, accuracy, grouped, proportion_ci
from lingdiag.prompts.sentences import likeliest, sentence_requests
from lingdiag.records import Item, ItemRecord, Prediction, Request, Response, ResultRow
from lingdiag.scoring import UNSPACED_LANGUAGES, ScoringPolicy, policy
from lingdiag.suite import Axis, Condition, Dataset, Suite, register_suite
from lingdiag.suites.minimal_pairs import data
from lingdiag.suites.minimal_pairs.files import FETCHED, load

Method = Literal["simple", "one-prefix"]
METHODS: tuple[Method, ...] = ("simple", "one-prefix")
ACC: Final = "accuracy"
ACC_CI: Final = "accuracy_ci95"
BY_PARADIGM: Final = "by_paradigm"
BY_TERM: Final = "by_term"
PUBLISHED: Final = "published"
BY_LANGUAGE: Final = "by_language"
LANGUAGE: Final = "language"


class LanguageScore(TypedDict):
    """Accuracy over one language's items."""

    accuracy: float
    accuracy_ci95: list[float]
    """Wilson 95% interval."""
    n: int


class _PairScores(TypedDict):
    """The keys every condition has."""

    accuracy: float
    accuracy_ci95: list[float]
    """Wilson 95% interval."""
    by_paradigm: dict[str, float]
    """Paradigm (UID) → accuracy."""
    by_term: dict[str, float]
    """Linguistics term → accuracy."""
    published: dict[str, dict[str, float]]
    """Paradigm → the published numbers the data gave (human agreement, the paper's models)."""
    outcomes: dict[str, str]
    """Per-item correctness for the policy sweep (``lingdiag.analysis.sweep.OUTCOMES``)."""


class PairScores(_PairScores, total=False):
    """What :func:`metrics` computes for one condition (``by_language`` only where the items are
    tagged with a language: SLING, CLAMS; BLiMP's are not, so its metrics stay as they were).
    """

    by_language: dict[str, LanguageScore]
    """Language → accuracy with its Wilson interval."""


class PairMetrics(PairScores, Counts):
    """One condition's metrics as ``metrics.json`` and result rows hold them."""


def _metrics(row: ResultRow) -> PairMetrics:
    return cast(PairMetrics, row.metrics)


@dataclass(frozen=True)
class PairScoring:
    """Score the good and the bad text of a pair under ``policy``; the likelier one is the answer."""

    method: Method
    policy: ScoringPolicy

    def render(self, item: Item) -> list[Request]:
        """Two requests: the good text, then the bad one."""
        f = item.fields
        if self.method == "simple":
            return sentence_requests([("", f["sentence_good"]), ("", f["sentence_bad"])], self.policy)
        return sentence_requests([(f["one_prefix_prefix"], " " + f["one_prefix_word_good"]),
                                  (f["one_prefix_prefix"], " " + f["one_prefix_word_bad"])], self.policy)

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """``good`` when the good text is strictly likelier, else ``bad``."""
        return likeliest(data.LABELS, responses)


def conditions(dataset: Dataset, axes: Mapping[str, Sequence[str]], options: Any, seed: int) -> list[Condition]:
    """One condition per method × scoring policy, named ``method/policy``."""
    out = []
    for method in METHODS:
        if method not in axes["method"]:
            continue
        items = [it for it in dataset.items if method == "simple" or it.fields.get("one_prefix_method")]
        if not items and dataset.items:  # an empty condition would be a table of nothing, exit 0
            raise ConfigError(f"--method {method}: none of the {len(dataset.items)} pairs of {dataset.name} has "
                              "one-prefix fields (BLiMP's one_prefix_*; SLING and CLAMS have none); "
                              "use --method simple")
        for p in scoring_policy.chosen(dict(axes)):
            out.append(Condition(f"{method}/{p.name}", {"method": method, scoring_policy.AXIS: p.name},
                                 PairScoring(method, p), items))
    return out


def metrics(records: Sequence[ItemRecord]) -> PairScores:
    """Accuracy overall (Wilson interval), per paradigm and per linguistics term (per language,
    with a Wilson interval each, where the items are tagged with one); the published numbers of
    each paradigm where the data gave them; the per-item outcomes for the policy sweep.
    """
    published: dict[str, Any] = {}
    for r in records:
        uid = str(r.tags.get("UID"))
        if uid not in published and isinstance(r.fields.get("published"), Mapping):
            published[uid] = dict(r.fields["published"])
    out: PairScores = {
        ACC: accuracy(records), ACC_CI: proportion_ci(records, lambda r: bool(r.correct)),
        BY_PARADIGM: grouped(accuracy, "UID")(records), BY_TERM: grouped(accuracy, "linguistics_term")(records),
        PUBLISHED: dict(sorted(published.items())), "outcomes": sweep.outcomes(records)}
    if any(LANGUAGE in r.tags for r in records):  # BLiMP's records have no language tag; its metrics stay as they were
        languages = sorted({str(r.tags.get(LANGUAGE, "")) for r in records})
        out[BY_LANGUAGE] = {lang: {ACC: accuracy(rs), ACC_CI: proportion_ci(rs, lambda r: bool(r.correct)),
                                   "n": len(rs)}
                            for lang in languages
                            for rs in [[r for r in records if str(r.tags.get(LANGUAGE, "")) == lang]]}
    return out


def _ci(interval: Sequence[float]) -> str:
    return "[" + ", ".join(f"{x:.3f}" for x in interval) + "]"


def _by_language(rows: Sequence[ResultRow]) -> str:
    """Accuracy per language with its interval, one row per language and condition (empty if untagged)."""
    body = [[lang, r.model, f"{r.axes.get('method')}/{r.axes.get(scoring_policy.AXIS)}", m[ACC], _ci(m[ACC_CI]), m["n"]]
            for r in rows for lang, m in sorted(_metrics(r).get(BY_LANGUAGE, {}).items())]
    if not body:
        return ""
    return ("\n**Accuracy per language** (Wilson 95% intervals)\n\n"
            + markdown_table(["Language", "Model", "Condition", "Accuracy (↑)", "95% CI", "N"], body))


def table(rows: Sequence[ResultRow]) -> str:
    """Accuracy per condition; per paradigm beside human agreement and the paper's models; the sweep."""
    rows = sorted(rows, key=lambda r: (r.axes.get("method", ""), r.model))
    policies = sorted({str(r.axes.get(scoring_policy.AXIS)) for r in rows})
    header = "\n".join("> " + policy(p).describe() for p in policies) + "\n\n"
    unspaced = sorted({lang for r in rows for lang in _metrics(r).get(BY_LANGUAGE, {}) if lang in UNSPACED_LANGUAGES})
    if unspaced:  # what each policy means for items written without spaces
        header += "\n".join(f"> {policy(p).unspaced()} ({', '.join(unspaced)})" for p in policies) + "\n\n"
    main = markdown_table(["Method", "Scoring policy", "Model", "Accuracy (↑)", "95% CI", "N"],
                          [[r.axes.get("method"), r.axes.get(scoring_policy.AXIS), r.model, _metrics(r)[ACC],
                            _ci(_metrics(r)[ACC_CI]), _metrics(r).get("n")]
                           for r in rows])
    published: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        for uid, ref in _metrics(r).get(PUBLISHED, {}).items():
            published[uid].update(ref)
    refs = [k for k in ("human", *data.PUBLISHED_MODELS) if any(k in v for v in published.values())]
    paradigms = sorted({uid for r in rows for uid in _metrics(r)[BY_PARADIGM]})
    cols = [f"{r.model} {r.axes.get('method')}/{r.axes.get(scoring_policy.AXIS)}" for r in rows]
    per = markdown_table(["Paradigm", *cols, *(f"{k} (paper)" for k in refs)],
                         [[uid, *(_metrics(r)[BY_PARADIGM].get(uid) for r in rows),
                           *(published.get(uid, {}).get(k) for k in refs)] for uid in paradigms])
    return (header + main + _by_language(rows) + "\n**Accuracy per paradigm**"
            + (" (human agreement and the paper's models from the data's summary files)" if refs else "") + "\n\n" + per
            + ("\n" + sweep.section(rows, ACC, "accuracy") if len(policies) > 1 else ""))


SUITE = register_suite(Suite(
    name="minimal-pairs",
    description="Minimal pairs (BLiMP, SLING, CLAMS as published): is the good sentence likelier, per paradigm, "
                "language and scoring policy",
    axes=(Axis("method", METHODS, ("simple",), "simple: whole sentences; one-prefix: the critical words "
               "after their shared prefix (BLiMP §3)"), scoring_policy.axis()),
    load=load,
    conditions=conditions,
    metrics=metrics,
    table=table,
    labels=data.LABELS,
    stat_tags=data.TAGS,
    default_dataset=FETCHED,
    headline=ACC,
    headline_label="Accuracy (↑): good sentence likelier",
))
