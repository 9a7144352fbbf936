"""The only orchestrator: dataset → prompts → model → parse → score → records → metrics."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from lingdiag.analysis import after_thinking, interpretable
from lingdiag.analysis import thinking as thinking_axis
from lingdiag.analysis.sweep import AXIS as SCORING_POLICY_AXIS
from lingdiag.config import RunConfig, redact_url_secrets
from lingdiag.errors import CapabilityError, ConfigError, RunError
from lingdiag.io.paths import sha256_file
from lingdiag.metrics import fragile
from lingdiag.metrics.core import N_ERRORS, N_UNFINISHED
from lingdiag.models.base import Backend, Precision, ReducedPrecision, ReportsUsage, dispatch
from lingdiag.models.cache import cached
from lingdiag.models.environment import lock_status
from lingdiag.parse.thinking import separate
from lingdiag.records import (
    UNFINISHED,
    UNPARSED,
    Generation,
    Item,
    ItemRecord,
    LogLikelihood,
    LoglikelihoodRequest,
    Request,
    Response,
    ResultRow,
    nonfinite,
)
from lingdiag.rundir import SCHEMA_VERSION, SUITE_COPY, Excluded, ModelIdentity, RunMeta, RunStore
from lingdiag.rundir.records import output_of, prompt_json
from lingdiag.scoring import LINGDIAG
from lingdiag.suite import SUITES, Condition, Dataset, Suite, spread
from lingdiag.thinking import DEFAULT_TAGS, Thinking, ThinkTags

RESUMABLE_CHANGES = ("batch_tokens",)
"""Config fields a resumed run may change: they group requests into batches, nothing more."""

Progress = Callable[[str, int, int], None]
"""``progress(condition, done, total)``, called after each chunk (and once before the first,
with the items done by earlier sessions)."""


@dataclass
class RunResult:
    """What ``run`` returns: where the run is and what it measured."""

    out: Path
    metrics: dict[str, Any]
    table: str
    skipped: dict[str, str] = field(default_factory=dict)
    """Conditions not run, with the reason (e.g. the backend has no log-likelihoods)."""
    usage: dict[str, int] = field(default_factory=dict)
    """What the backend counted during this run (requests, retries, errors, tokens, cache hits)."""


def _asking_tokens(requests: Sequence[Request], ask: bool) -> Sequence[Request]:
    """``requests``, with ``ask`` (``--per-token``) every log-likelihood request asking for per-token log-probs."""
    if not ask:
        return requests
    return [replace(r, per_token=True) if isinstance(r, LoglikelihoodRequest) else r for r in requests]


def _score(condition: Condition, item: Item, requests: Sequence[Request], responses: Sequence[Response],
           tags: ThinkTags | None = DEFAULT_TAGS, per_token: bool = False) -> ItemRecord:
    # The one place thinking is split from answers: parsers below see answers only.
    responses = [separate(r, tags) if isinstance(r, Generation) else r for r in responses]
    errors = [r.error for r in responses if r.error is not None]
    broken = next((bad for r in responses if r.error is None for bad in [nonfinite(r)] if bad), None)
    if broken:
        errors.append(f"non-finite number from the backend ({broken})")
    unfinished = [r for r in responses if isinstance(r, Generation) and r.unfinished]
    label, detail = UNPARSED, {}
    if unfinished and not errors:  # no answer to parse: the trace is never read as one
        label = UNFINISHED
    elif not errors:
        pred = condition.strategy.parse(item, responses)
        bad = nonfinite(dict(pred.detail))
        if bad:  # e.g. a sum of finite log-probs that overflowed: a broken score, never a win
            errors.append(f"non-finite score ({bad})")
        else:
            label, detail = pred.label, dict(pred.detail)
    correct = None if item.gold is None or errors else label == item.gold  # a failed item is unanswered
    strategy = condition.strategy
    replays = strategy.replayed(item.id).recorded() if isinstance(strategy, after_thinking.AfterThinkingStrategy) \
        else None
    return ItemRecord(
        condition=condition.name, axes=dict(condition.axes), item_id=item.id, tags=dict(item.tags),
        fields=dict(item.fields), prompts=[prompt_json(r) for r in requests],
        outputs=[output_of(r, per_token) for r in responses], label=label, detail=detail,
        gold=item.gold, correct=correct, error="; ".join(errors) if errors else None, replays=replays,
    )


def _labeller(condition: Condition, item: Item) -> Callable[[Sequence[LogLikelihood]], str]:
    """The label ``condition`` predicts for ``item`` from given log-likelihoods."""
    return lambda responses: condition.strategy.parse(item, responses).label


@dataclass(frozen=True, slots=True)
class Recording:
    """How a run turns responses into records, the same for every chunk of every condition."""

    tags: ThinkTags | None = DEFAULT_TAGS
    """The inline thinking tags split off before any parser runs (None: the raw text is the answer)."""
    precision: Precision | None = None
    """A reduced-precision backend's noise bound and re-scoring (None: no decisions are recorded)."""
    per_token: bool = False
    """Keep log-likelihoods' per-token log-probs and spans in the records (``--per-token``)."""

    def records(self, condition: Condition, chunk: Sequence[Item], rendered: dict[str, Sequence[Request]],
                responses: Sequence[Sequence[Response]]) -> list[ItemRecord]:
        """The records of ``chunk``'s items from their ``responses``; with a reduced precision, each
        log-likelihood decision with its margin and fragility (``settle``).
        """
        if self.precision is not None:
            return self.settle(condition, chunk, rendered, responses, self.precision)
        return [_score(condition, it, rendered[it.id], rs, self.tags, self.per_token)
                for it, rs in zip(chunk, responses, strict=True)]

    def settle(self, condition: Condition, chunk: Sequence[Item], rendered: dict[str, Sequence[Request]],
               responses: Sequence[Sequence[Response]], precision: Precision) -> list[ItemRecord]:
        """A reduced-precision chunk's records, each log-likelihood decision with its margin and fragility;
        with ``precision.rescore``, the fragile items' requests scored again in float32 (one call for the
        chunk) and those items decided on float32's log-probs.
        """
        decisions = [fragile.decide(_labeller(condition, it), rs, precision.per_token)
                     for it, rs in zip(chunk, responses, strict=True)]
        answers = [list(rs) for rs in responses]
        again = [k for k, d in enumerate(decisions) if d is not None and d.fragile] if precision.rescore else []
        if again and precision.rescore is not None:
            requests = [r for k in again for r in rendered[chunk[k].id] if isinstance(r, LoglikelihoodRequest)]
            fresh = iter(precision.rescore(requests))
            for k in again:
                answers[k] = [next(fresh) if isinstance(r, LogLikelihood) else r for r in answers[k]]
                redone = fragile.decide(_labeller(condition, chunk[k]), answers[k], precision.per_token)
                decisions[k] = redone and replace(redone, fragile=True, rescored=True)
        records = []
        for it, rs, d in zip(chunk, answers, decisions, strict=True):
            record = _score(condition, it, rendered[it.id], rs, self.tags, self.per_token)
            records.append(record if d is None else replace(record, decision=d.recorded()))
        return records

    def recorded(self) -> dict[str, Any] | None:
        """``meta.json``'s ``precision`` part (None in float32)."""
        if self.precision is None:
            return None
        return {"dtype": self.precision.dtype, "per_token_noise": self.precision.per_token,
                "rescore_fragile": "float32" if self.precision.rescore else None}


def _recording(config: RunConfig, backend: Backend) -> Recording:
    """How ``config``'s run on ``backend`` records: its thinking tags, precision and per-token log-probs."""
    return Recording(think_tags(config), backend.precision() if isinstance(backend, ReducedPrecision) else None,
                     config.per_token)


def resolve_axes(suite: Suite, selection: dict[str, list[str]]) -> dict[str, list[str]]:
    """Fill defaults and validate every axis value against the suite."""
    names = {a.name for a in suite.axes}
    for key in selection:
        if key not in names:
            raise ConfigError(f"suite {suite.name!r} has no axis {key!r}; its axes: {', '.join(sorted(names))}")
    resolved = {}
    for a in suite.axes:
        if a.name in selection and not selection[a.name]:
            raise ConfigError(f"--{a.name} names no value; valid: {', '.join(a.values)}")
        values = selection.get(a.name) or list(a.default)
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:  # the same condition twice would record every item twice and double N
            raise ConfigError(f"--{a.name} names {', '.join(map(repr, repeated))} more than once")
        bad = [v for v in values if v not in a.values]
        if bad:
            raise ConfigError(f"unknown {a.name} {', '.join(map(repr, bad))} for suite {suite.name!r}; "
                              f"valid: {', '.join(a.values)}")
        resolved[a.name] = values
    return resolved


def _needs(requests: Sequence[Request]) -> set[str]:
    return {"loglikelihood" if isinstance(r, LoglikelihoodRequest) else
            "constrained" if r.constraint is not None else "generate" for r in requests}


def _check(backend: Backend, needs: set[str]) -> str | None:
    caps = backend.capabilities
    missing = [n for n, ok in (("generate", caps.generate), ("loglikelihood", caps.loglikelihood),
                               ("constrained", caps.constrained)) if n in needs and not ok]
    if not missing:
        return None
    return f"backend {backend.identity.get('backend')} cannot serve {', '.join(missing)} requests"


def _policies(requests: Sequence[Request], named: bool) -> list[dict[str, Any]]:
    """The scoring policies ``requests`` carry, as ``meta.json`` records them: all of them for a
    condition on the scoring-policy axis (``named``), else those other than the default (so the
    ``meta.json`` of the suites that never choose one stays as it was).
    """
    seen = {r.policy for r in requests if isinstance(r, LoglikelihoodRequest) and not r.messages}
    return [p.recorded() for p in sorted(seen, key=lambda p: p.name) if named or p != LINGDIAG]


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("lingdiag", "torch", "transformers", "openai", "xgrammar"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


@dataclass(frozen=True)
class Plan:
    """What a run will do, before any model is loaded: the one planner of the run and of
    cost estimates.
    """

    suite: Suite
    dataset: Dataset
    conditions: list[Condition]
    items: dict[str, list[Item]]
    """Condition name → the items it runs on (after ``--limit``)."""
    thoughts: after_thinking.Thoughts | None = None
    """The generation run whose thinking ``--after-thinking`` replays."""
    not_scored: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """After-thinking condition → the items of its selection it cannot score, by reason."""

    def order(self) -> list[tuple[str, str]]:
        """Every (condition, item id) the run records, in the order ``items.jsonl`` holds them."""
        return [(c.name, it.id) for c in self.conditions for it in self.items[c.name]]

    def requests(self) -> list[Request]:
        """Every request the run would send (before resume and cache hits)."""
        return [r for c in self.conditions for item in self.items[c.name] for r in c.strategy.render(item)]


def plan(config: RunConfig) -> Plan:
    """Load the dataset and build the conditions of ``config``; options are validated here."""
    suite = SUITES.get(config.suite)
    # Every suite takes the thinking axis: the run wraps its conditions, the suite knows nothing of it.
    thinking = config.axes.get(thinking_axis.AXIS)
    axes = resolve_axes(suite, {k: v for k, v in config.axes.items() if k != thinking_axis.AXIS})
    options = suite.parse_options(config.options)
    dataset = suite.load(config.dataset).require_items()
    conditions = suite.conditions(dataset, axes, options, config.seed)
    if thinking is not None:
        conditions = thinking_axis.expand(conditions, thinking_axis.settings(thinking, think_tags(config)))
    thoughts = None
    if config.after_thinking is not None:
        thoughts = after_thinking.Thoughts.load(after_thinking.ReplaySource.parse(config.after_thinking))
        conditions = after_thinking.expand(conditions, thoughts)
    items = {c.name: spread(c.items, config.limit) for c in conditions}
    if config.shard is not None:  # after --limit, so that the shards together are the unsharded run
        shard = config.shard
        items = {name: [it for it in chosen if shard.holds(it.id)] for name, chosen in items.items()}
    not_scored: dict[str, dict[str, list[str]]] = {}
    for c in conditions:  # after --limit: a twin scores the plain condition's items that have thinking
        if isinstance(c.strategy, after_thinking.AfterThinkingStrategy):
            items[c.name], not_scored[c.name] = c.strategy.scorable(items[c.name])
    return Plan(suite, dataset, conditions, items, thoughts, not_scored)


def think_tags(config: RunConfig) -> ThinkTags | None:
    """The inline thinking tags of ``config`` (None: no inline separation)."""
    return DEFAULT_TAGS if config.think_tags is None else ThinkTags.parse(config.think_tags)


def default_out(config: RunConfig) -> Path:
    """``runs/<suite>-<model>-<dataset>``, one directory per configuration by default."""
    name = f"{redact_url_secrets(config.model)}-{Path(config.dataset).stem}"
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
    return Path("runs") / f"{SUITES.get(config.suite).name}-{safe}"


def _run_chunks(condition: Condition, pending: Sequence[Item], total: int, rendered: dict[str, Sequence[Request]],
                backend: Backend, store: RunStore, chunk_items: int, progress: Progress | None,
                recording: Recording) -> str | None:
    """Send ``pending`` items chunk by chunk and append their records (made as ``recording`` says);
    the reason if the backend turns out not to serve the condition's requests.
    """
    if progress and pending:  # where this session starts (resumed items are not its work)
        progress(condition.name, total - len(pending), total)
    for k in range(0, len(pending), chunk_items):
        chunk = pending[k:k + chunk_items]
        requests = [r for it in chunk for r in rendered[it.id]]
        try:
            responses = dispatch(backend, requests)
        except CapabilityError as e:
            return str(e)
        per_item, pos = [], 0
        for it in chunk:
            n = len(rendered[it.id])
            per_item.append(responses[pos:pos + n])
            pos += n
        store.append(recording.records(condition, chunk, rendered, per_item))
        if progress:
            progress(condition.name, total - len(pending) + k + len(chunk), total)
    return None


def excluded_note(excluded: Sequence[Excluded]) -> str:
    """The table's note on the items of the data left out as not interpretable (empty if none)."""
    if not excluded:
        return ""
    by_reason: dict[str, list[str]] = {}
    for e in excluded:
        by_reason.setdefault(e.reason, []).append(e.item_id)
    return (f"**Excluded items** (not interpretable, never scored): {len(excluded)}; "
            + "; ".join(f"{reason}: {len(ids)} ({', '.join(ids)})" for reason, ids in by_reason.items()) + "\n\n")


def finalize(store: RunStore, order: Sequence[tuple[str, str]], suite: Suite, conditions: Sequence[Condition],
             model: str, dataset: str, excluded: Sequence[Excluded] = (), note: str = "") -> tuple[dict[str, Any], str]:
    """Rewrite the records in canonical ``order`` (condition, item id); write ``metrics.json`` and
    ``table.md`` (noting the ``excluded`` items of the data, and opening with ``note``). A run's end,
    and ``lingdiag merge``'s.
    """
    records = store.finalize(order)
    metrics: dict[str, Any] = {}
    for condition in conditions:
        rs = [r for r in records if r.condition == condition.name]
        if rs:
            # Fragile counts exist only where records carry decisions (reduced-precision runs).
            metrics[condition.name] = suite.condition_metrics(rs) | fragile.counts([r.decision for r in rs])
    table = suite.table([ResultRow(model, c.name, dict(c.axes), metrics[c.name], str(store.root), dataset)
                         for c in conditions if c.name in metrics])
    unfinished = {c: m[N_UNFINISHED] for c, m in metrics.items() if m.get(N_UNFINISHED)}
    if unfinished:  # beside unparsed, never folded into it: the thinking ran out of tokens
        table = ("**Unfinished thinking** (the trace never closed; no answer was read): "
                 + "; ".join(f"{c}: {k} of {metrics[c]['n']}" for c, k in unfinished.items()) + "\n\n" + table)
    failed = {c: m[N_ERRORS] for c, m in metrics.items() if m.get(N_ERRORS)}
    if failed:  # never let an outage pass for a result
        table = ("**Failed items** (backend errors; every metric is over the answered items only): "
                 + "; ".join(f"{c}: {k} of {metrics[c]['n']}" for c, k in failed.items()) + "\n\n" + table)
    table = note + interpretable.note(interpretable.reasons(records)) + excluded_note(excluded) + \
        fragile.table_note(metrics) + table
    store.write_json("metrics.json", metrics)
    store.write_text("table.md", table)
    return metrics, table


def evaluate(
    config: RunConfig,
    backend: Backend,
    out: Path,
    progress: Progress | None = None,
    planned: Plan | None = None,
) -> RunResult:
    """Run every condition of ``config`` on ``backend``, resuming whatever ``out`` holds.

    Args:
        config: The validated run configuration.
        backend: The model (usually wrapped in the response cache).
        out: Run directory; created, or resumed if it holds the same configuration.
        progress: Optional callback after each chunk.
        planned: ``plan(config)`` if the caller already built it (e.g. for a cost estimate).

    Returns:
        The run's location, metrics per condition and the markdown table.
    """
    p = planned or plan(config)
    _check_out(out)
    if p.thoughts is not None:  # before the run directory exists: another model's thinking is no replay
        p.thoughts.check_model(ModelIdentity(backend.identity))
    store = RunStore(out)
    created = not store.root.exists()
    try:
        with store.lock():
            return _evaluate(config, backend, store, progress, p)
    except BaseException:
        if created:  # e.g. the model failed to load on first use
            store.discard_if_empty()
        raise


def _evaluate(config: RunConfig, backend: Backend, store: RunStore, progress: Progress | None, p: Plan) -> RunResult:
    """``evaluate`` in a locked run directory."""
    suite, dataset, conditions = p.suite, p.dataset, p.conditions
    sources = checksums(dataset.source)
    suite_file = {"path": suite.source.path, "sha256": suite.source.sha256} if suite.source else None
    done, earlier = store.prepare_resume(config.recorded(), ignore=RESUMABLE_CHANGES, dataset=sources,
                                         suite_file=suite_file)
    _check_axes(store, conditions)
    timings: dict[str, float] = {}
    skipped: dict[str, str] = {}
    thinking: dict[str, Any] = {}
    policies: dict[str, list[dict[str, Any]]] = {}
    first = RunMeta(config=config.recorded(), identity=ModelIdentity(backend.identity), schema_version=SCHEMA_VERSION,
                    checksums=sources, versions=_versions(), lock=lock_status().recorded(), seed=config.seed,
                    timings={}, skipped={}, suite_file=suite_file, excluded=tuple(dataset.excluded) or None,
                    after_thinking={c: p.thoughts.recorded(reasons) for c, reasons in p.not_scored.items()}
                    if p.thoughts is not None else None,
                    planned=sum(len(p.items[c.name]) for c in conditions))  # until it finishes: readers see M

    def meta(usage: dict[str, int] | None = None) -> RunMeta:
        return first.replaced(timings=dict(timings), skipped=dict(skipped), scoring_policies=dict(policies) or None,
                              thinking=dict(thinking) or None, usage=usage)

    if suite.source is not None:  # reports read the records with this copy, whatever becomes of the file
        store.write_text(SUITE_COPY, suite.source.text)
    recording = _recording(config, backend)
    first = first.replaced(precision=recording.recorded())
    store.write_meta(meta())
    usage_before = backend.usage() if isinstance(backend, ReportsUsage) else {}
    order: list[tuple[str, str]] = []
    for condition in conditions:
        items = p.items[condition.name]
        order += [(condition.name, it.id) for it in items]
        rendered = {it.id: _asking_tokens(condition.strategy.render(it), config.per_token) for it in items}
        named = _policies([r for rs in rendered.values() for r in rs], SCORING_POLICY_AXIS in condition.axes)
        if named:
            policies[condition.name] = named
        reason = _check(backend, _needs([r for rs in rendered.values() for r in rs]))
        if reason:
            skipped[condition.name] = reason
            continue
        pending = [it for it in items if (condition.name, it.id) not in done]
        start = time.perf_counter()
        setting = thinking_setting(condition)
        if setting is not None:
            thinking[condition.name] = setting.recorded()
        unserved = _run_chunks(condition, pending, len(items), rendered, backend, store, config.chunk_items, progress,
                               recording)
        if unserved:
            skipped[condition.name] = unserved
        # Seconds spent on the condition, summed over resumed sessions; written per condition
        # so that a run killed later keeps the timings of what it finished.
        timings[condition.name] = round(earlier.get(condition.name, 0) + time.perf_counter() - start, 3)
        store.write_meta(meta())
    model = backend.identity.get("model", config.model)
    metrics, table = finalize(store, order, suite, conditions, model, config.dataset, dataset.excluded,
                              after_thinking.note(p.not_scored))
    usage = ({k: v - usage_before.get(k, 0) for k, v in backend.usage().items()}
             if isinstance(backend, ReportsUsage) else None)
    store.write_meta(meta(usage).replaced(planned=None))  # finished: meta.json as before planned existed
    return RunResult(out=store.root, metrics=metrics, table=table, skipped=dict(skipped), usage=usage or {})


def thinking_setting(condition: Condition) -> Thinking | None:
    """The thinking setting of a condition on the thinking axis, else None."""
    strategy = condition.strategy
    return strategy.setting if isinstance(strategy, thinking_axis.ThinkingStrategy) else None


def load_model(config: RunConfig) -> Backend:
    """The model of ``config`` with its provider options (not cached); a shard's own server if it has one."""
    from lingdiag.models.providers import load_backend

    return load_backend(config.model_spec(), config.provider_options())


def _check_axes(store: RunStore, conditions: Sequence[Condition]) -> None:
    """Refuse to resume records made under other settings of a condition (e.g. another prompt
    source after a default changed): the config alone holds only the options a user gave.
    """
    current = {c.name: dict(c.axes) for c in conditions}
    seen: set[str] = set()
    for r in store.load_records():
        if r.condition in current and r.condition not in seen:
            seen.add(r.condition)
            now = current[r.condition]
            if dict(r.axes) != now:
                diff = sorted(k for k in set(r.axes) | set(now) if r.axes.get(k) != now.get(k))
                raise RunError(f"{store.root}: {r.condition!r} was run with other settings ("
                               + ", ".join(f"{k}: {r.axes.get(k)!r} then, {now.get(k)!r} now" for k in diff)
                               + "); use another --out directory")


def checksums(source: Mapping[str, str]) -> dict[str, str]:
    """Every data file's SHA-256: a user's file gets one too, so that resuming after an edit is refused."""
    return {k: v or (sha256_file(Path(k)) if Path(k).is_file() else "") for k, v in source.items()}


def _check_out(out: Path) -> None:
    if Path(out).exists() and not Path(out).is_dir():
        raise ConfigError(f"--out {out}: a file, not a run directory")


def run(
    config: RunConfig,
    out: Path | None = None,
    *,
    backend: Backend | None = None,
    cache: bool = True,
    progress: Progress | None = None,
    planned: Plan | None = None,
) -> RunResult:
    """Load the model named in ``config`` (unless ``backend`` is given) and evaluate.

    Args:
        config: The run configuration.
        out: Run directory (default ``runs/<suite>-<model>-<dataset>``).
        backend: An already built backend (tests, notebooks); else ``config.model`` is loaded.
        cache: Serve repeated requests from the SQLite response cache.
        progress: Optional per-chunk callback.
        planned: ``plan(config)`` if already built.

    Returns:
        See :func:`evaluate`.
    """
    p = planned or plan(config)  # options, data and the output place are checked before a model loads
    _check_out(out or default_out(config))
    model = backend or load_model(config)
    if cache:
        model = cached(model)
    return evaluate(config, model, out or default_out(config), progress, p)
