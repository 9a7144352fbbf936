"""Re-diagnosis: an adapted model's runs against its base model's, from their records alone.

``lingdiag adapt report`` pairs every adapted run with the base run of its suite (same weights,
no adapter) and tests, per condition, the adapted model against the base on the same items with
the paired machinery of :mod:`lingdiag.analysis.compare`: exact McNemar and a paired bootstrap
interval of the accuracy difference, and the suite's rates and gaps (TBR_C, Acc D, Δ_AA, macro
F1...) by paired permutation, Holm over each table. Where the records carry the lemma tag of the
adapter's recorded split (``split.json`` beside it), the items are split into those whose lemma
was trained on, those whose lemma was held out, and all items. Runs of other suites show the
side effects on them the same way (all items). Several steering runs of one vector give a
sweep over the coefficient α.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.adapt.data import LemmaSplit, read_split, split_file
from lingdiag.analysis.compare import paired, permuted
from lingdiag.errors import ConfigError, RunError
from lingdiag.metrics.core import wilson
from lingdiag.metrics.stats import holm_rows
from lingdiag.model_spec import ModelSpec
from lingdiag.models.hf.adapters import AdapterIdentity
from lingdiag.reading import LoadedRun, load_run
from lingdiag.records import ItemRecord
from lingdiag.suite import Suite

ALL = "all"
"""The split part holding every paired item."""
SPLIT_PARTS = ("trained", "held-out", "unseen", ALL)
"""The parts in table order (``unseen``: a lemma the split does not know; shown only when present)."""


@dataclass(frozen=True, slots=True)
class AdapterInfo:
    """An adapted run's adapter: as the run was given it, and as its ``meta.json`` records it."""

    spec: str
    """The adapter as the run was given it (``lora:DIR``, ``steer:FILE@α``)."""
    identity: AdapterIdentity
    """What the backend identity recorded (kind, hash, rank and targets or layers and α)."""

    @property
    def label(self) -> str:
        """The adapter in one line: kind, hash and the choices that make it (rank, targets, layers, α)."""
        a = self.identity
        if a.kind == "lora":
            return f"LoRA {a.sha256[:8]} (rank {'' if a.rank is None else a.rank}, targets {','.join(a.targets)})"
        return f"steering {a.sha256[:8]} (layers {','.join(map(str, a.layers))}, α={a.alpha:g})"


@dataclass(frozen=True)
class Pairing:
    """An adapted run and the base run of its suite."""

    base: LoadedRun
    adapted: LoadedRun
    adapter: AdapterInfo
    split: LemmaSplit | None
    """The adapter's lemma split where the records carry its lemma tag; None: all items only."""


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One metric of one condition and split part, adapted against base on the same items."""

    suite: str
    adapter: str
    """:attr:`AdapterInfo.label`."""
    base_model: str
    adapted_model: str
    condition: str
    part: str
    """``trained``, ``held-out``, ``unseen`` or ``all``."""
    metric: str
    """``accuracy`` (McNemar) or a key of the suite's paired metrics (permutation)."""
    n: int
    """Paired items."""
    base: float
    adapted: float
    diff: float
    """``adapted - base``."""
    base_ci: tuple[float, float] | None
    """95% interval of the base value (Wilson, or the suite's own interval of the metric)."""
    adapted_ci: tuple[float, float] | None
    diff_ci: tuple[float, float] | None
    """Paired bootstrap 95% interval of the accuracy difference; None for a permutation row."""
    test: str
    """``McNemar`` or ``permutation``."""
    p: float
    p_holm: float


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One coefficient of a steering sweep: the headline and the label shares of one condition."""

    alpha: float
    condition: str
    headline: float
    headline_ci: tuple[float, float] | None
    shares: dict[str, float]
    """Label → share of the condition's answered items predicted with it."""


@dataclass(frozen=True)
class Rediagnosis:
    """Everything ``lingdiag adapt report`` shows and writes."""

    pairings: list[Pairing]
    tables: list[list[MetricRow]]
    """The rows of each pairing (accuracy, then rates and gaps), in the pairings' order."""
    sweep: dict[str, list[SweepPoint]]
    """Vector label (hash and layers) → points over α; only vectors with at least two coefficients."""
    headline: str
    """The metric the sweep plots (the suite's headline, else accuracy)."""

    @property
    def rows(self) -> list[MetricRow]:
        """Every row of every pairing."""
        return [r for t in self.tables for r in t]


def _adapter(run: LoadedRun) -> AdapterInfo | None:
    identity = AdapterIdentity.from_recorded(run.meta.identity.fields)
    if identity is None:
        return None
    config = run.meta.run_config
    spec = str(config.model_options.get("adapter", "")) or ModelSpec.parse(config.model).adapter or ""
    return AdapterInfo(spec, identity)


def read_runs(paths: Sequence[Path]) -> list[LoadedRun]:
    """Each run directory read back; one without ``items.jsonl`` is a one-line error."""
    for path in paths:
        if not (Path(path) / "items.jsonl").is_file():
            raise RunError(f"{path}: no items.jsonl (not a run directory, or a run that wrote no record yet)")
    return [load_run(Path(p)) for p in paths]


def _split_for(run: LoadedRun, adapter: AdapterInfo, override: Path | None) -> LemmaSplit | None:
    path = override or split_file(adapter.spec)
    if path is None or not path.is_file():
        return None
    split = read_split(path)
    return split if any(split.field in r.tags for r in run.records) else None


def pair_runs(base: LoadedRun, others: Sequence[LoadedRun], split: Path | None = None) -> list[Pairing]:
    """Pair every adapted run among ``others`` with the base run of its suite.

    Args:
        base: The base model's run of the suite the adapter was trained for.
        others: Adapted runs, and base runs of other suites (their side effects).
        split: A split file to use instead of the one beside each adapter.

    Raises:
        ConfigError: A run is paired with nothing, a suite has two base runs, or the base and an
            adapted run are not the same model.
    """
    if _adapter(base) is not None:
        raise ConfigError(f"{base.path}: the first run must be the base model's, not an adapted one "
                          f"({base.model})")
    bases = {base.suite_title: base}
    adapted = []
    for run in others:
        if _adapter(run) is None:
            if run.suite_title in bases:
                raise ConfigError(f"{run.path} and {bases[run.suite_title].path} are both base runs of "
                                  f"{run.suite_title}; give one base run per suite")
            bases[run.suite_title] = run
        else:
            adapted.append(run)
    if not adapted:
        raise ConfigError("no adapted run given (a run of a model BASE+lora:DIR or BASE+steer:FILE@α)")
    pairings = []
    for run in adapted:
        if run.suite_title not in bases:
            raise ConfigError(f"{run.path} is a {run.suite_title} run and no base run of {run.suite_title} was given "
                              f"(base runs: {', '.join(f'{s} {b.path}' for s, b in bases.items())})")
        mate = bases[run.suite_title]
        weights = run.meta.identity.weights_sha256, mate.meta.identity.weights_sha256
        if weights[0] != weights[1]:
            raise ConfigError(f"{run.path} adapts another model ({run.model}) than the base run {mate.path} "
                              f"({mate.model}): their weights differ")
        info = _adapter(run)
        assert info is not None  # adapted runs only
        pairings.append(Pairing(mate, run, info, _split_for(run, info, split)))
    unused = [b for s, b in bases.items() if not any(p.base is b for p in pairings)]
    if unused:
        raise ConfigError(f"{unused[0].path}: a base run of {unused[0].suite_title} with no adapted run to compare")
    return pairings


def _by_condition(run: LoadedRun) -> dict[str, list[ItemRecord]]:
    out: dict[str, list[ItemRecord]] = {}
    for r in run.records:
        if r.error is None:
            out.setdefault(r.condition, []).append(r)
    return out


def _parts(records: Sequence[ItemRecord], split: LemmaSplit | None) -> dict[str, list[ItemRecord]]:
    if split is None:
        return {ALL: list(records)}
    parts: dict[str, list[ItemRecord]] = {p: [] for p in SPLIT_PARTS}
    for r in records:
        parts[split.side(r.tags, r.item_id)].append(r)
        parts[ALL].append(r)
    return {p: rs for p, rs in parts.items() if rs or p != "unseen"}


def _interval(metrics: Mapping[str, object], key: str) -> tuple[float, float] | None:
    value = metrics.get(f"{key}_ci95")
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return float(value[0]), float(value[1])
    return None


def _compare(suite: Suite, pairing: Pairing, seed: int) -> list[MetricRow]:
    base, adapted = _by_condition(pairing.base), _by_condition(pairing.adapted)
    shared = [c for c in adapted if c in base]
    if not shared:
        raise ConfigError(f"{pairing.base.path} and {pairing.adapted.path} share no condition "
                          f"(base: {', '.join(base)}; adapted: {', '.join(adapted)})")
    common = (suite.name, pairing.adapter.label, pairing.base.model, pairing.adapted.model)
    accuracy, rates = [], []
    for c in shared:
        ids = {r.item_id for r in adapted[c]}
        b_parts = _parts([r for r in base[c] if r.item_id in ids], pairing.split)
        a_parts = _parts(adapted[c], pairing.split)
        for part, b in b_parts.items():
            a = a_parts.get(part, [])
            if not a or not b:
                continue
            name = f"{c}/{part}"
            if any(r.correct is not None for r in a):
                t = paired(name, a, b, seed=seed)
                accuracy.append(MetricRow(*common, c, part, "accuracy", t.n, t.acc_b, t.acc_a, t.diff,
                                          wilson(round(t.acc_b * t.n), t.n), wilson(round(t.acc_a * t.n), t.n),
                                          t.ci95, "McNemar", t.p, math.nan))
            mb, ma = suite.metrics(b), suite.metrics(a)
            for p in permuted(suite, name, a, b, seed=seed):
                rates.append(MetricRow(*common, c, part, p.metric, p.n, p.b, p.a, p.diff, _interval(mb, p.metric),
                                       _interval(ma, p.metric), None, "permutation", p.p, math.nan))
    return holm_rows(accuracy) + holm_rows(rates)


def _point(suite: Suite, alpha: float, condition: str, records: Sequence[ItemRecord], headline: str) -> SweepPoint:
    metrics = suite.metrics(records)
    value = metrics.get(headline)
    shares = {lab: sum(r.label == lab for r in records) / len(records) for lab in sorted({r.label for r in records})}
    return SweepPoint(alpha, condition, float(value) if isinstance(value, int | float) else math.nan,
                      _interval(metrics, headline), shares)


def _sweep(pairings: Sequence[Pairing], headline: str) -> dict[str, list[SweepPoint]]:
    by_vector: dict[str, list[Pairing]] = {}
    for p in pairings:
        a = p.adapter.identity
        if a.kind == "steer" and a.alpha is not None:
            by_vector.setdefault(f"{a.sha256[:8]} layers {','.join(map(str, a.layers))}", []).append(p)
    out = {}
    for vector, ps in by_vector.items():
        runs = {float(p.adapter.identity.alpha or 0.0): p.adapted for p in ps}
        # The base model is the vector at α=0 (byte-identical records): it anchors the sweep.
        runs.setdefault(0.0, ps[0].base)
        if len(runs) < 2:
            continue
        suite = ps[0].adapted.suite
        out[vector] = [_point(suite, alpha, c, rs, headline) for alpha, run in sorted(runs.items())
                       for c, rs in _by_condition(run).items()]
    return out


def rediagnose(base: Path, others: Sequence[Path], *, split: Path | None = None, seed: int = 0) -> Rediagnosis:
    """Read the runs, pair them, and compute every table and the sweep.

    Args:
        base: The base model's run of the suite the adapter was trained for.
        others: Adapted runs (of that suite or others) and base runs of other suites.
        split: A split file to use instead of the one recorded beside each adapter.
        seed: Seeds the bootstrap intervals and the drawn permutations.

    Returns:
        The pairings, their rows (accuracy first, then rates and gaps) and the sweep.
    """
    if split is not None and not split.is_file():
        raise ConfigError(f"--split {split}: no such file")
    runs = read_runs([base, *others])
    pairings = pair_runs(runs[0], runs[1:], split)
    tables = [_compare(p.adapted.suite, p, seed) for p in pairings]
    suite = runs[0].suite
    headline = suite.headline or "accuracy"
    primary = [p for p in pairings if p.adapted.suite_title == runs[0].suite_title]
    return Rediagnosis(pairings, tables, _sweep(primary, headline), headline)
