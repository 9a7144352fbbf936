"""The only orchestrator: dataset → prompts → model → parse → score → records → metrics."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from lingdiag.conditions.expander import Expander, Ran, Replays
from lingdiag.conditions.precision import precision
from lingdiag.conditions.registry import expanders
from lingdiag.conditions.thinking import think_tags
from lingdiag.config import RunConfig, redact_url_secrets, transport_of
from lingdiag.engine.finish import Ending, finish
from lingdiag.engine.judge import Judge, judge_config, judge_of
from lingdiag.errors import CapabilityError, ConfigError, RunError
from lingdiag.io.content import content_id, text_id
from lingdiag.io.paths import path_safe
from lingdiag.metrics import fragile
from lingdiag.models.base import Backend, Capabilities, Precision, ReportsUsage, dispatch
from lingdiag.models.cache import cached
from lingdiag.models.door import check_model, load_model
from lingdiag.models.environment import lock_status
from lingdiag.parse.thinking import separate
from lingdiag.records import (
    UNFINISHED,
    UNPARSED,
    Generation,
    GenerationRequest,
    Item,
    ItemRecord,
    LogLikelihood,
    LoglikelihoodRequest,
    Request,
    Response,
    nonfinite,
)
from lingdiag.rundir import SCHEMA_VERSION, SUITE_COPY, Inputs, ModelIdentity, RunMeta, RunStore
from lingdiag.rundir.inputs import identifies_file, recorded_path
from lingdiag.rundir.records import output_of, prompt_json
from lingdiag.suite import SUITES, Condition, Dataset, Suite, spread
from lingdiag.thinking import DEFAULT_TAGS, ThinkTags

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
        try:
            pred = condition.strategy.parse(item, responses)
        except Exception as e:  # nothing an answer says stops a run: the item fails, with the reader's reason
            errors.append(reader_failed(e))
        else:
            bad = nonfinite(dict(pred.detail))
            if bad:  # e.g. a sum of finite log-probs that overflowed: a broken score, never a win
                errors.append(f"non-finite score ({bad})")
            else:
                label, detail = pred.label, dict(pred.detail)
    correct = None if item.gold is None or errors else label == item.gold  # a failed item is unanswered
    strategy = condition.strategy
    return ItemRecord(
        condition=condition.name, axes=dict(condition.axes), item_id=item.id, tags=dict(item.tags),
        fields=dict(item.fields), prompts=[prompt_json(r) for r in requests],
        outputs=[output_of(r, per_token) for r in responses], label=label, detail=detail,
        gold=item.gold, correct=correct, error="; ".join(errors) if errors else None,
        replays=strategy.replays(item.id) if isinstance(strategy, Replays) else None,
    )


def reader_failed(e: Exception) -> str:
    """The one-line error of an item whose answer the strategy's reader could not read."""
    return f"the answer reader failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"


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
    judge: Judge | None = None
    """A model reading the answers after the rules (``--reader judge:SPEC``; None: the rules alone)."""

    def records(self, condition: Condition, chunk: Sequence[Item], rendered: Mapping[str, Sequence[Request]],
                responses: Sequence[Sequence[Response]]) -> list[ItemRecord]:
        """The records of ``chunk``'s items from their ``responses``; with a reduced precision, each
        log-likelihood decision with its margin and fragility (``settle``); with a judge, its readings.
        """
        if self.precision is not None:
            records = self.settle(condition, chunk, rendered, responses, self.precision)
        else:
            records = [_score(condition, it, rendered[it.id], rs, self.tags, self.per_token)
                       for it, rs in zip(chunk, responses, strict=True)]
        return records if self.judge is None else self.judge.records(condition, chunk, records)

    def settle(self, condition: Condition, chunk: Sequence[Item], rendered: Mapping[str, Sequence[Request]],
               responses: Sequence[Sequence[Response]], precision: Precision) -> list[ItemRecord]:
        """A reduced-precision chunk's records, each log-likelihood decision with its margin and fragility;
        with ``precision.rescore``, the fragile items' requests scored again in float32 (one call for the
        chunk) and those items decided on float32's log-probs.
        """
        decisions = [_decided(condition, it, rs, precision.per_token) for it, rs in zip(chunk, responses, strict=True)]
        answers = [list(rs) for rs in responses]
        again = [k for k, d in enumerate(decisions) if d is not None and d.fragile] if precision.rescore else []
        if again and precision.rescore is not None:
            requests = [r for k in again for r in rendered[chunk[k].id] if isinstance(r, LoglikelihoodRequest)]
            fresh = iter(precision.rescore(requests))
            for k in again:
                answers[k] = [next(fresh) if isinstance(r, LogLikelihood) else r for r in answers[k]]
                redone = _decided(condition, chunk[k], answers[k], precision.per_token)
                decisions[k] = redone and replace(redone, fragile=True, rescored=True)
        records = []
        for it, rs, d in zip(chunk, answers, decisions, strict=True):
            record = _score(condition, it, rendered[it.id], rs, self.tags, self.per_token)
            records.append(record if d is None else replace(record, decision=d.recorded()))
        return records


def _decided(condition: Condition, item: Item, responses: Sequence[Response], per_token: float) \
        -> fragile.Decision | None:
    """The item's log-likelihood decision (``fragile.decide``); None where its reader fails (``_score``
    then fails the item with the reason).
    """
    try:
        return fragile.decide(_labeller(condition, item), responses, per_token)
    except Exception:  # the record says why: _score runs the same reader
        return None


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
    needs = {"loglikelihood" if isinstance(r, LoglikelihoodRequest) else
             "constrained" if r.constraint is not None else "generate" for r in requests}
    if any(isinstance(r, GenerationRequest) and r.sampling is not None for r in requests):
        needs.add("sampling")
    return needs


def _check(backend: Backend, needs: set[str]) -> str | None:
    caps = backend.capabilities
    missing = [n for n, ok in (("generate", caps.generate), ("loglikelihood", caps.loglikelihood),
                               ("constrained", caps.constrained), ("sampling", caps.sampling))
               if n in needs and not ok]
    if not missing:
        return None
    return f"backend {backend.identity.get('backend')} cannot serve {', '.join(missing)} requests"


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
    expanders: Sequence[Expander] = ()
    """The axes every suite takes from the run (``lingdiag.conditions``), in the order they applied."""
    not_scored: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Condition → the items of its selection an expander cannot score, by reason."""

    def order(self) -> list[tuple[str, str]]:
        """Every (condition, item id) the run records, in the order ``items.jsonl`` holds them."""
        return [(c.name, it.id) for c in self.conditions for it in self.items[c.name]]

    def requests(self) -> list[Request]:
        """Every request the run would send (before resume and cache hits)."""
        return [r for c in self.conditions for item in self.items[c.name] for r in c.strategy.render(item)]

    def sources(self) -> dict[str, str]:
        """Every file the run reads → its identity (:func:`checksums`): the data's, the dataset folder's where
        the data is one (so a file added to it is seen), and those the expanders read (their SHA-256).
        """
        folder = Path(self.dataset.name)
        whole = {str(folder): ""} if folder.is_dir() and str(folder) not in self.dataset.source else {}
        return checksums({**self.dataset.source, **whole}) | {k: v for e in self.expanders
                                                               for k, v in e.sources().items()}

    def suite_file(self) -> dict[str, str] | None:
        """``meta.json``'s ``suite_file`` as the caller names it: path, byte SHA-256 and content identity."""
        source = self.suite.source
        if source is None:
            return None
        return {"path": source.path, "sha256": source.sha256,
                "content": text_id(source.text.encode("utf-8"), Path(source.path).suffix)}

    def inputs(self, config: RunConfig) -> Inputs:
        """What a run of ``config`` is computed from now: what its directory's state is checked against."""
        suite = self.suite_file()
        return Inputs(config.recorded(), self.sources(), suite["content"] if suite else "",
                      suite["sha256"] if suite else "")

    def require(self, capabilities: Capabilities, backend: str) -> None:
        """Refuse a backend (named ``backend``) whose declared ``capabilities`` lack what an axis of the run
        asks (``--temperature`` of one that cannot sample): one line, before any model loads.
        """
        for e in self.expanders:
            e.require(capabilities, backend)

    def note(self) -> str:
        """The table's opening lines from the expanders (the items they did not score)."""
        return "".join(e.note(self.not_scored) for e in self.expanders)

    def ending(self, model: str, dataset: str) -> Ending:
        """What ``finish`` needs of the run beside its records."""
        return Ending(self.order(), [(c.name, c.axes) for c in self.conditions], model, dataset,
                      self.dataset.excluded, self.note())


def plan(config: RunConfig) -> Plan:
    """Load the dataset and build the conditions of ``config``; options are validated here."""
    suite = SUITES.get(config.suite)
    axes_of_run = expanders(config)
    # The expanders' axes (e.g. thinking) are every suite's: the suite knows nothing of them.
    taken = {a for e in axes_of_run for a in e.takes}
    axes = resolve_axes(suite, {k: v for k, v in config.axes.items() if k not in taken})
    options = suite.parse_options(config.options)
    dataset = suite.load(config.dataset).require_items()
    conditions = suite.conditions(dataset, axes, options, config.seed)
    for e in axes_of_run:
        conditions = e.expand(conditions)
    keep = None if config.items is None else set(config.items)  # --items FILE: e.g. the anchors of `items anchors`
    items = {c.name: spread([it for it in c.items if keep is None or it.id in keep], config.limit) for c in conditions}
    if keep is not None and not any(items.values()):
        raise ConfigError(f"--items: none of its {len(keep)} item ids is an item of {suite.name}'s "
                          f"{config.dataset} data")
    if config.shard is not None:  # after --limit, so that the shards together are the unsharded run
        shard = config.shard
        items = {name: [it for it in chosen if shard.holds(it.id)] for name, chosen in items.items()}
    not_scored: dict[str, dict[str, list[str]]] = {}
    for c in conditions:  # after --limit: e.g. a twin scores the plain condition's items that have thinking
        for e in axes_of_run:
            items[c.name], left = e.select(c, items[c.name])
            if left is not None:
                not_scored.setdefault(c.name, {}).update(left)
    return Plan(suite, dataset, conditions, items, axes_of_run, not_scored)


def default_out(config: RunConfig) -> Path:
    """``runs/<suite>-<model>-<dataset>``, one directory per configuration by default."""
    name = f"{redact_url_secrets(config.model)}-{Path(config.dataset).stem}"
    safe = path_safe(name)
    return Path("runs") / f"{SUITES.get(config.suite).name}-{safe}"


def _run_chunks(condition: Condition, pending: Sequence[Item], total: int, rendered: Mapping[str, Sequence[Request]],
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
    for e in p.expanders:  # before the run directory exists: e.g. another model's thinking is no replay
        e.check(backend)
    judge = judge_of(config, load_model)  # a judge model that cannot load fails here, before the run directory exists
    store = RunStore(out)
    created = not store.root.exists()
    try:
        with store.lock():
            return _evaluate(config, backend, store, progress, p, judge)
    except BaseException:
        if created:  # e.g. the model failed to load on first use
            store.discard_if_empty()
        raise


@dataclass
class _Session:
    """One session of a run in its locked directory: what it did so far, for ``meta.json``."""

    plan: Plan
    backend: Backend
    first: RunMeta
    """The parts known before any condition runs."""
    earlier: Mapping[str, float]
    """Seconds earlier sessions spent per condition."""
    timings: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    reached: list[Condition] = field(default_factory=list)
    requests: dict[str, Sequence[Request]] = field(default_factory=dict)
    declined: set[str] = field(default_factory=set)
    judge: Judge | None = None

    def meta(self, usage: dict[str, int] | None = None) -> RunMeta:
        """``meta.json`` as of now: each expander records its own part; a judge its gate, once decided."""
        ran = Ran(self.reached, self.requests, self.declined, self.plan.not_scored, self.backend)
        parts = {e.part: e.recorded(ran) for e in self.plan.expanders}
        if self.judge is not None and self.judge.gate.decided:
            parts["judge_gate"] = self.judge.gate.recorded()
        return self.first.replaced(timings=dict(self.timings), skipped=dict(self.skipped), usage=usage, **parts)

    def reach(self, condition: Condition, rendered: Mapping[str, Sequence[Request]]) -> str | None:
        """Note ``condition`` reached with its requests; the reason the backend cannot serve them, if so."""
        self.reached.append(condition)
        self.requests[condition.name] = [r for rs in rendered.values() for r in rs]
        reason = _check(self.backend, _needs(self.requests[condition.name]))
        if reason:
            self.skipped[condition.name] = reason
            self.declined.add(condition.name)
        return reason

    def spent(self, condition: Condition, start: float) -> None:
        """Seconds spent on ``condition``, summed over resumed sessions."""
        self.timings[condition.name] = round(self.earlier.get(condition.name, 0) + time.perf_counter() - start, 3)


def _begin(config: RunConfig, backend: Backend, store: RunStore, p: Plan) -> tuple[_Session, set[tuple[str, str]]]:
    """Check what ``store`` holds against ``config`` and write the first ``meta.json``; the session
    and the (condition, item) keys earlier sessions finished.
    """
    suite = p.suite
    inputs = p.inputs(config)
    done, earlier, attempts = store.prepare_resume(inputs)
    _check_axes(store, p.conditions)
    # Where each file read lies, resolved now and relative to the run directory where it is the run's own
    # (``lingdiag.rundir.inputs``): a run read from another directory, or moved with its study, finds them.
    sources = {recorded_path(k, store.root) if identifies_file(v) and Path(k).exists() else k: v
               for k, v in (inputs.sources or {}).items()}
    suite_file = p.suite_file()
    if suite_file is not None:
        suite_file["path"] = recorded_path(suite_file["path"], store.root)
    recorded = config.recorded()
    first = RunMeta(config=recorded, identity=ModelIdentity(backend.identity), schema_version=SCHEMA_VERSION,
                    checksums=sources, versions=_versions(), lock=lock_status().recorded(), seed=config.seed,
                    timings={}, skipped={}, suite_file=suite_file, excluded=tuple(p.dataset.excluded) or None,
                    planned=len(p.order()),  # until it finishes: readers of a run in progress see M
                    origin=str(store.root.resolve()), attempts=[*attempts, transport_of(recorded)])
    if suite.source is not None:  # reports read the records with this copy, whatever becomes of the file
        store.write_text(SUITE_COPY, suite.source.text)
    session = _Session(p, backend, first, earlier)
    store.write_meta(session.meta())
    return session, done


def _evaluate(config: RunConfig, backend: Backend, store: RunStore, progress: Progress | None, p: Plan,
              judge: Judge | None) -> RunResult:
    """``evaluate`` in a locked run directory."""
    if judge is not None and store.meta_path.is_file():  # a resumed run keeps its judge's gate
        judge.gate.resume(store.read_meta().parts.get("judge_gate"))
    session, done = _begin(config, backend, store, p)
    session.judge = judge
    recording = Recording(think_tags(config), precision(backend), config.per_token, judge)
    usage_before = backend.usage() if isinstance(backend, ReportsUsage) else {}
    for condition in p.conditions:
        items = p.items[condition.name]
        rendered = {it.id: _asking_tokens(condition.strategy.render(it), config.per_token) for it in items}
        if session.reach(condition, rendered):
            continue
        pending = [it for it in items if (condition.name, it.id) not in done]
        start = time.perf_counter()
        unserved = _run_chunks(condition, pending, len(items), rendered, backend, store, config.chunk_items,
                               progress, recording)
        if unserved:
            session.skipped[condition.name] = unserved
        # Written per condition, so that a run killed later keeps the timings of what it finished.
        session.spent(condition, start)
        store.write_meta(session.meta())
    usage = ({k: v - usage_before.get(k, 0) for k, v in backend.usage().items()}
             if isinstance(backend, ReportsUsage) else None)
    model = backend.identity.get("model", config.model)
    # Finished: meta.json as before ``planned`` existed.
    metrics, table = finish(store, p.suite, p.ending(model, config.dataset), session.meta(usage).replaced(planned=None))
    return RunResult(out=store.root, metrics=metrics, table=table, skipped=dict(session.skipped), usage=usage or {})


def check_run(config: RunConfig, planned: Plan, check: Callable[[RunConfig], Capabilities | None] = check_model) \
        -> None:
    """Everything a run of ``config`` would refuse once its models load, refused before any loads: its
    model (:func:`check_model`), what the axes ask of it (``Plan.require``) and the judge model of
    ``--reader judge:SPEC``, which must generate.

    Args:
        config: The run configuration.
        planned: ``plan(config)``.
        check: How a model is checked (a study's stand-ins declare nothing: None).
    """
    declared = check(config)
    if declared is not None:
        planned.require(declared, config.model_spec().provider)
    judging = judge_config(config)
    if judging is not None:
        judge = check(judging)
        if judge is not None and not judge.generate:
            raise ConfigError(f"--reader {redact_url_secrets(config.reader or '')}: the judge model cannot generate")


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
    """Every data file's identity: a user's file or folder gets its content identity (what a reader takes
    from it, ``lingdiag.io.content``), so that resuming after an edit is refused and a comment or a blank
    line is no edit; a pinned official file keeps its SHA-256, a built-in dataset its name.
    """
    return {k: (content_id(Path(k)) or v) if identifies_file(v) else v for k, v in source.items()}


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
    if backend is None:  # a given backend is checked by ``evaluate``, as loaded
        check_run(config, p)
    model = backend or load_model(config)
    if cache:
        model = cached(model)
    return evaluate(config, model, out or default_out(config), progress, p)
