"""A fitted item model: every cell's item parameters, abilities and item fit as read-only arrays,
with what it was fitted from, saved beside its tables (``fit.json`` and ``fit.npz``) so that later
commands (anchors, the study report, the viewer) read it instead of fitting again.

Fitting is ``fit → ItemFit``, as statsmodels separates ``fit`` from the results: :func:`fit_cells`
takes the matrices and the policies, and everything else reads the frozen object.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lingdiag.errors import RunError
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.limits import read_regular
from lingdiag.items import irt
from lingdiag.items.chance import Chance, Test, against_chance, count_line
from lingdiag.items.flags import DEFAULT_POLICY, Family, FlagPolicy, ItemStats, flags, weak_family
from lingdiag.items.human import Human, agreement
from lingdiag.items.irt import DEFAULT_PRIORS, Array, Estimates, Kind, NotIdentified, Priors
from lingdiag.items.matrix import ResponseMatrix
from lingdiag.items.text import ItemText

FIT_JSON = "fit.json"
FIT_NPZ = "fit.npz"
FORMAT = "lingdiag-items"
VERSION = 2
_ARRAYS = ("responses", "slope", "intercept", "slope_se", "intercept_se", "cov_ac", "infit", "outfit", "ability",
           "ability_se")
_CHANCE = ("separation", "reversed_p", "reversed_q", "misfit_p", "misfit_q")
MIN_2PL_MODELS = 30
"""Below this many models ``items fit`` fits the 1PL unless the 2PL is asked for (docs/items.md, "What a
panel of N models can support"): on 8-12 models the 2PL's per-item slopes are what chance gives, and
psychometric practice asks 30 or more respondents before per-item parameters are trusted."""


@dataclass(frozen=True)
class CellFit:
    """One cell (suite and condition) fitted. Item arrays have one entry per item of the cell; an item
    answered with gold by fewer than two models is not fitted (NaN).
    """

    suite: str
    condition: str
    models: tuple[str, ...]
    runs: tuple[str, ...]
    """Each model's run directory (relative to the fit's directory once saved)."""
    item_ids: tuple[str, ...]
    responses: NDArray[np.int8]
    """Models × items: 1 right, 0 wrong, −1 missing."""
    slope: Array
    intercept: Array
    slope_se: Array
    intercept_se: Array
    cov_ac: Array
    infit: Array
    outfit: Array
    ability: Array
    ability_se: Array
    loglik: float
    iterations: int
    converged: bool
    fingerprint: str
    chance: Chance
    """The flags tested against chance (:mod:`lingdiag.items.chance`)."""
    nodes: int = 0
    """Quadrature points of the grid the estimates come from."""
    quadrature_change: float = float("nan")
    """The largest move of an estimate between the last two grids."""
    human: Mapping[str, Human] = field(default_factory=dict)
    """Item id → the humans' view of its gold, where the suite has human ratings."""
    texts: Mapping[str, ItemText] = field(default_factory=dict)
    """Item id → its text and gold, where the runs carry them."""

    def __post_init__(self) -> None:
        for name in _ARRAYS:
            getattr(self, name).setflags(write=False)

    @property
    def key(self) -> tuple[str, str]:
        """(suite, condition)."""
        return self.suite, self.condition

    @property
    def n_models(self) -> NDArray[np.int64]:
        """Models graded on each item."""
        return np.asarray((self.responses >= 0).sum(0))

    @property
    def n_right(self) -> NDArray[np.int64]:
        """Models right on each item."""
        return np.asarray((self.responses == 1).sum(0))

    @property
    def answered(self) -> NDArray[np.int64]:
        """Items each model answered with gold."""
        return np.asarray((self.responses >= 0).sum(1))

    @property
    def fitted(self) -> NDArray[np.bool_]:
        """Items in the fit (two graded models or more)."""
        return np.asarray(np.isfinite(self.slope))

    @property
    def difficulty(self) -> Array:
        """``−c / a``: the ability at which the item is right half the time."""
        return irt.difficulty(self.slope, self.intercept)

    @property
    def difficulty_se(self) -> Array:
        """The delta method's standard error of the difficulty."""
        return irt.difficulty_se(self.slope, self.intercept, self.slope_se, self.intercept_se, self.cov_ac)

    def item_flags(self, kind: Kind, policy: FlagPolicy) -> list[list[str]]:
        """Each item's flags with their reasons."""
        n, right, ch = self.n_models, self.n_right, self.chance
        weak = self.weak_families()
        out = []
        for j, item in enumerate(self.item_ids):
            a, se = float(self.slope[j]), float(self.slope_se[j])
            stats = ItemStats(int(n[j]), int(right[j]), a, a - irt.Z95 * se, a + irt.Z95 * se, float(self.infit[j]),
                              float(self.outfit[j]), kind == "1pl", float(ch.separation[j]),
                              float(ch.reversed.q[j]), float(ch.misfit.q[j]),
                              weak.get(self.texts[item].family if item in self.texts else ""))
            out.append(flags(stats, self.human.get(item), policy))
        return out

    def weak_families(self) -> dict[str, Family]:
        """Each family of the cell's items (``""``: the items without one, or the whole cell where none has one)
        on which every model is weak: where the models' accuracies on the family alone lead one to expect at
        least one of its items every model gets wrong (:func:`lingdiag.items.flags.weak_family`).
        """
        names = np.asarray([self.texts[i].family if i in self.texts else "" for i in self.item_ids])
        out = {}
        for name in dict.fromkeys(names.tolist()):
            found = weak_family(name, self.responses[:, names == name])
            if found is not None:
                out[name] = found
        return out

    def chance_lines(self, policy: FlagPolicy) -> list[str]:
        """The flags' counts beside what chance gives, one line each."""
        n, where = len(self.models), f"{self.suite}, {self.condition}: "
        return [where + count_line("whose answers fall as ability rises (negative discrimination)",
                                   self.chance.reversed, n, policy.fdr),
                where + count_line(f"with a mean-square above {policy.misfit:g} (misfit)", self.chance.misfit, n,
                                   policy.fdr)]


@dataclass(frozen=True)
class ItemFit:
    """Every cell's fit, the policies it was made with, and what was left out (one line each)."""

    kind: Kind
    priors: Priors
    policy: FlagPolicy
    cells: tuple[CellFit, ...]
    left_out: tuple[str, ...] = ()
    """Runs not read and cells not fitted, each with why."""
    notes: tuple[str, ...] = ()
    """What a reader of the numbers should know (models answering alike, the flags against chance)."""
    why: str = ""
    """Why this item model (the number of models, or asked for)."""
    warnings: tuple[str, ...] = ()
    """What every output repeats: a 2PL asked for on fewer than :data:`MIN_2PL_MODELS` models."""

    def cell(self, suite: str, condition: str) -> CellFit:
        """The fit of one cell.

        Raises:
            RunError: the fit has no such cell.
        """
        for c in self.cells:
            if c.key == (suite, condition):
                return c
        have = ", ".join(f"{c.suite}/{c.condition}" for c in self.cells)
        raise RunError(f"the fit has no cell {suite}/{condition} (it has {have})")


def _item_fit(responses: NDArray[np.int8], slope: Array, intercept: Array, ability: Array) -> tuple[Array, Array]:
    """Infit and outfit mean-squares of each item at the models' abilities (NaN where not fitted)."""
    graded = responses >= 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        p = 1 / (1 + np.exp(-(ability[:, None] * slope[None, :] + intercept[None, :])))
        var = p * (1 - p)
        sq = np.where(graded, ((responses == 1) - p) ** 2, 0.0)
        w = np.where(graded, var, 0.0)
        outfit = np.where(graded, sq / np.where(var > 0, var, np.nan), 0.0).sum(0) / graded.sum(0)
        infit = sq.sum(0) / w.sum(0)
    return np.asarray(infit), np.asarray(outfit)


def _degenerate(m: ResponseMatrix) -> str | None:
    """Why a cell cannot be fitted (one line), or None."""
    where = f"{m.suite}, {m.condition}"
    graded = m.observed
    if not graded.any():
        return f"{where}: no graded answer (no gold label, or every request failed); nothing fitted"
    models = graded.any(1).sum()
    if models < 2:
        return f"{where}: one model ({m.models[int(np.argmax(graded.any(1)))]}) has graded answers; an item model " \
               "compares two or more; nothing fitted"
    right = m.responses == 1
    if right[graded].all():
        return f"{where}: every graded answer is right; nothing separates the models or the items; nothing fitted"
    if not right[graded].any():
        return f"{where}: every graded answer is wrong; nothing separates the models or the items; nothing fitted"
    shared = (graded.sum(0) >= 2)
    mixed = shared & (right.sum(0) > 0) & (right.sum(0) < graded.sum(0))
    if not mixed.any():
        return f"{where}: no item answered by two models is right for some and wrong for others; nothing " \
               "fitted"
    return None


def fit_cell(m: ResponseMatrix, kind: Kind, priors: Priors,
             human: Mapping[str, Mapping[str, float]] | None = None, gold: Mapping[str, str] | None = None,
             policy: FlagPolicy = DEFAULT_POLICY, texts: Mapping[str, ItemText] | None = None) -> CellFit:
    """Fit one cell.

    Raises:
        NotIdentified: the cell is degenerate (one line saying why).
    """
    why = _degenerate(m)
    if why is not None:
        raise NotIdentified(why)
    n = len(m.item_ids)
    keep = np.flatnonzero(m.observed.sum(0) >= 2)
    sub = np.ascontiguousarray(m.responses[:, keep])
    est: Estimates = irt.fit(sub, kind, priors)

    def spread(values: Array) -> Array:
        full = np.full(n, np.nan)
        full[keep] = values
        return full

    slope, intercept = spread(est.slope), spread(est.intercept)
    infit, outfit = _item_fit(sub, est.slope, est.intercept, est.ability)
    humans = {}
    for item in m.item_ids:
        means = (human or {}).get(item)
        g = (gold or {}).get(item)
        if means is not None and g is not None:
            view = agreement(g, means)
            if view is not None:
                humans[item] = view
    chance = against_chance(m.responses, slope, intercept, np.asarray(est.ability), policy.misfit, policy.draws,
                            policy.seed)
    shown = {i: t for i, t in (texts or {}).items() if i in set(m.item_ids)}
    return CellFit(m.suite, m.condition, m.models, m.runs, m.item_ids, np.array(m.responses), slope, intercept,
                   spread(est.slope_se), spread(est.intercept_se), spread(est.cov_ac), spread(infit), spread(outfit),
                   np.array(est.ability), np.array(est.ability_se), est.loglik, est.iterations, est.converged,
                   m.fingerprint(), chance, est.nodes, est.quadrature_change, humans, shown)


def choose_kind(n_models: int, asked: Kind | None) -> tuple[Kind, str, tuple[str, ...]]:
    """The item model for ``n_models`` models (the fewest of any cell), why, and the warnings every output
    repeats: the 1PL below :data:`MIN_2PL_MODELS` models, the 2PL from there, or what was asked for.

    Raises:
        NotIdentified: a 2PL asked for on fewer than three models (two answers per item cannot give a slope
            and an intercept beside the abilities).
    """
    if asked is None:
        if n_models < MIN_2PL_MODELS:
            return "1pl", (f"1PL: {n_models} models, below the {MIN_2PL_MODELS} a 2PL's per-item slopes need "
                           "(--irt 2pl fits it anyway, with a warning)"), ()
        return "2pl", f"2PL: {n_models} models, at least the {MIN_2PL_MODELS} its per-item slopes need", ()
    if asked == "2pl" and n_models < 3:
        raise NotIdentified(f"--irt 2pl on {n_models} models: a slope per item needs three models at least; fit the "
                            "1PL (the default)")
    if asked == "2pl" and n_models < MIN_2PL_MODELS:
        return "2pl", f"2PL, as asked (--irt 2pl), on {n_models} models", (
            f"a 2PL on {n_models} models (fewer than {MIN_2PL_MODELS}): each item's slope rests on {n_models} answers; "
            "its discriminations are mostly chance and the prior a ~ N(1, 1) (docs/items.md); the 1PL is the default "
            "here",)
    return asked, f"{asked.upper()}, as asked (--irt {asked}), on {n_models} models", ()


def fit_cells(cells: Sequence[ResponseMatrix], kind: Kind | None = None, priors: Priors = DEFAULT_PRIORS,
              policy: FlagPolicy = DEFAULT_POLICY, human: Mapping[tuple[str, str], Mapping[str, float]] | None = None,
              gold: Mapping[tuple[str, str], str] | None = None, left_out: Sequence[str] = (),
              texts: Mapping[tuple[str, str], ItemText] | None = None) -> ItemFit:
    """Fit every cell that can be; the others are named in ``left_out`` with why.

    Args:
        cells: The matrices.
        kind: ``1pl`` or ``2pl``; None chooses by the number of models (:func:`choose_kind`).
        priors: The priors and settings of the fit.
        policy: The flags' bounds and their test against chance.
        human: (suite, item id) → label → mean human rating.
        gold: (suite, item id) → gold label.
        left_out: Lines already known (runs not read).
        texts: (suite, item id) → the item's text and gold.

    Raises:
        NotIdentified: no cell can be fitted (each cell's reason, one line), or a 2PL asked for on two models.
    """
    usable = [m for m in cells if _degenerate(m) is None]
    chosen, why, warnings = choose_kind(min((len(m.models) for m in usable), default=0), kind) if usable else \
        (kind or "1pl", "", ())
    fitted, left, notes = [], list(left_out), []
    for m in cells:
        try:
            fitted.append(fit_cell(m, chosen, priors, {i: v for (s, i), v in (human or {}).items() if s == m.suite},
                                   {i: v for (s, i), v in (gold or {}).items() if s == m.suite}, policy,
                                   {i: v for (s, i), v in (texts or {}).items() if s == m.suite}))
        except NotIdentified as e:
            left.append(str(e))
            continue
        notes += _notes(m) + fitted[-1].chance_lines(policy)
        if not fitted[-1].converged:
            notes.append(f"{m.suite}, {m.condition}: the fit did NOT converge in {priors.max_iter} EM steps")
        if fitted[-1].quadrature_change >= priors.quadrature_tol:
            notes.append(f"{m.suite}, {m.condition}: the estimates still move by {fitted[-1].quadrature_change:.2g} "
                         f"at {fitted[-1].nodes} quadrature points")
    if not fitted:
        raise NotIdentified("; ".join(dict.fromkeys(left)) or "no cell to fit")
    return ItemFit(chosen, priors, policy, tuple(fitted), tuple(left), tuple(notes), why, warnings)


def _notes(m: ResponseMatrix) -> list[str]:
    out = []
    rows: dict[bytes, str] = {}
    for k, name in enumerate(m.models):
        key = m.responses[k].tobytes()
        if key in rows:
            out.append(f"{m.suite}, {m.condition}: {rows[key]} and {name} answered every item alike (the same run "
                       "twice?); both are fitted as models")
        rows.setdefault(key, name)
    return out


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _test_json(t: Test) -> dict[str, Any]:
    return {"observed": t.observed, "expected": t.expected, "as_many": t.as_many}


def save(f: ItemFit, out: Path) -> list[Path]:
    """Write ``OUT/fit.json`` and ``OUT/fit.npz`` atomically (run paths relative to ``out``)."""
    make_dir(out)
    arrays: dict[str, NDArray[Any]] = {}
    cells = []
    for k, c in enumerate(f.cells):
        for name in _ARRAYS:
            arrays[f"c{k}_{name}"] = np.asarray(getattr(c, name))
        ch = c.chance
        for name, values in zip(_CHANCE, (ch.separation, ch.reversed.p, ch.reversed.q, ch.misfit.p, ch.misfit.q),
                                strict=True):
            arrays[f"c{k}_{name}"] = np.asarray(values)
        cells.append({"suite": c.suite, "condition": c.condition, "models": list(c.models),
                      "runs": [_relative(r, out) for r in c.runs], "item_ids": list(c.item_ids),
                      "loglik": c.loglik, "iterations": c.iterations, "converged": c.converged,
                      "nodes": c.nodes, "quadrature_change": _finite(c.quadrature_change),
                      "fingerprint": c.fingerprint,
                      "chance": {"draws": ch.draws, "seed": ch.seed, "reversed": _test_json(ch.reversed),
                                 "misfit": _test_json(ch.misfit)},
                      "human": {i: [h.verdict, h.margin, h.preferred] for i, h in c.human.items()},
                      "texts": {i: [t.text, t.gold, t.family] for i, t in c.texts.items()}})
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    # fit.json names its arrays' SHA-256: a kill between the two writes, or two fits writing one
    # directory at once, leaves a pair that is refused, never one read with the other's numbers.
    meta = {"format": FORMAT, "version": VERSION, "kind": f.kind, "priors": asdict(f.priors),
            "policy": asdict(f.policy), "method": f.priors.describe(), "left_out": list(f.left_out),
            "notes": list(f.notes), "why": f.why, "warnings": list(f.warnings),
            "arrays_sha256": hashlib.sha256(buf.getvalue()).hexdigest(), "cells": cells}
    write_atomic(Path(out) / FIT_NPZ, buf.getvalue())
    write_atomic(Path(out) / FIT_JSON, json.dumps(meta, ensure_ascii=False, allow_nan=False, indent=1) + "\n")
    return [Path(out) / FIT_JSON, Path(out) / FIT_NPZ]


def _relative(run: str, out: Path) -> str:
    return Path(os.path.relpath(Path(run).resolve(), Path(out).resolve())).as_posix()


def load(out: Path) -> ItemFit:
    """The fit saved in ``out`` (run paths resolved against ``out``).

    Raises:
        RunError: not a saved fit, or one damaged or of another version (one line naming the file).
    """
    path = Path(out) / FIT_JSON
    try:
        meta = json.loads(read_regular(path).decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise RunError(f"{path}: not a fit `lingdiag items fit` wrote")
        if meta.get("version") != VERSION:
            raise RunError(f"{path}, field 'version': {meta.get('version')!r}; this lingdiag reads {VERSION}")
        raw = read_regular(Path(out) / FIT_NPZ)
        if hashlib.sha256(raw).hexdigest() != meta.get("arrays_sha256"):
            raise RunError(f"{Path(out) / FIT_NPZ}: not the arrays {path} was written with (a fit interrupted or "
                           "two fits into one directory); fit again with `lingdiag items fit`")
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {k: np.array(npz[k]) for k in npz.files}
        cells = []
        for k, c in enumerate(meta["cells"]):
            got = {name: arrays[f"c{k}_{name}"] for name in _ARRAYS}
            human = {i: Human(str(v[0]), float(v[1]), str(v[2])) for i, v in c["human"].items()}
            numbers = {n: got[n].astype(np.float64) for n in _ARRAYS[1:]}
            tests = {n: arrays[f"c{k}_{n}"].astype(np.float64) for n in _CHANCE}
            ch = c["chance"]
            chance = Chance(int(ch["draws"]), int(ch["seed"]), tests["separation"],
                            Test(**ch["reversed"], p=tests["reversed_p"], q=tests["reversed_q"]),
                            Test(**ch["misfit"], p=tests["misfit_p"], q=tests["misfit_q"]))
            change = c["quadrature_change"]
            cells.append(CellFit(suite=str(c["suite"]), condition=str(c["condition"]), models=tuple(c["models"]),
                                 runs=tuple(str(Path(out) / r) for r in c["runs"]), item_ids=tuple(c["item_ids"]),
                                 responses=got["responses"].astype(np.int8), loglik=float(c["loglik"]),
                                 iterations=int(c["iterations"]), converged=bool(c["converged"]),
                                 fingerprint=str(c["fingerprint"]), chance=chance, nodes=int(c["nodes"]),
                                 quadrature_change=float("nan") if change is None else float(change), human=human,
                                 texts={i: ItemText(str(v[0]), None if v[1] is None else str(v[1]),
                                                    str(v[2]) if len(v) > 2 else "")
                                        for i, v in c["texts"].items()}, **numbers))
            if cells[-1].responses.shape != (len(cells[-1].models), len(cells[-1].item_ids)):
                raise RunError(f"{Path(out) / FIT_NPZ}: cell {k}'s arrays do not match {path}")
        return ItemFit(meta["kind"], Priors(**meta["priors"]), FlagPolicy(**meta["policy"]), tuple(cells),
                       tuple(meta["left_out"]), tuple(meta["notes"]), str(meta["why"]), tuple(meta["warnings"]))
    except RunError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, OSError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: not a readable fit ({type(e).__name__}: {str(e)[:120]}); fit again with "
                       "`lingdiag items fit`") from None
