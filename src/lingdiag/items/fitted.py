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
from lingdiag.items.flags import DEFAULT_POLICY, FlagPolicy, ItemStats, flags
from lingdiag.items.human import Human, agreement
from lingdiag.items.irt import DEFAULT_PRIORS, Array, Estimates, Kind, NotIdentified, Priors
from lingdiag.items.matrix import ResponseMatrix

FIT_JSON = "fit.json"
FIT_NPZ = "fit.npz"
FORMAT = "lingdiag-items"
VERSION = 1
_ARRAYS = ("responses", "slope", "intercept", "slope_se", "intercept_se", "cov_ac", "infit", "outfit", "ability",
           "ability_se")


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
    human: Mapping[str, Human] = field(default_factory=dict)
    """Item id → the humans' view of its gold, where the suite has human ratings."""

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
        n, right = self.n_models, self.n_right
        out = []
        for j, item in enumerate(self.item_ids):
            a, se = float(self.slope[j]), float(self.slope_se[j])
            stats = ItemStats(int(n[j]), int(right[j]), a, a - irt.Z95 * se, a + irt.Z95 * se, float(self.infit[j]),
                              float(self.outfit[j]), kind == "1pl")
            out.append(flags(stats, self.human.get(item), policy))
        return out


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
    """What a reader of the numbers should know (few models, models answering alike)."""

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
             ) -> CellFit:
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
    return CellFit(m.suite, m.condition, m.models, m.runs, m.item_ids, np.array(m.responses), slope, intercept,
                   spread(est.slope_se), spread(est.intercept_se), spread(est.cov_ac), spread(infit), spread(outfit),
                   np.array(est.ability), np.array(est.ability_se), est.loglik, est.iterations, est.converged,
                   m.fingerprint(), humans)


def fit_cells(cells: Sequence[ResponseMatrix], kind: Kind = "2pl", priors: Priors = DEFAULT_PRIORS,
              policy: FlagPolicy = DEFAULT_POLICY, human: Mapping[tuple[str, str], Mapping[str, float]] | None = None,
              gold: Mapping[tuple[str, str], str] | None = None, left_out: Sequence[str] = ()) -> ItemFit:
    """Fit every cell that can be; the others are named in ``left_out`` with why.

    Args:
        cells: The matrices.
        kind: ``1pl`` or ``2pl``.
        priors: The priors and settings of the fit.
        policy: The flags' bounds.
        human: (suite, item id) → label → mean human rating.
        gold: (suite, item id) → gold label.
        left_out: Lines already known (runs not read).

    Raises:
        NotIdentified: no cell can be fitted (each cell's reason, one line).
    """
    fitted, left, notes = [], list(left_out), []
    for m in cells:
        try:
            fitted.append(fit_cell(m, kind, priors, {i: v for (s, i), v in (human or {}).items() if s == m.suite},
                                   {i: v for (s, i), v in (gold or {}).items() if s == m.suite}))
        except NotIdentified as e:
            left.append(str(e))
            continue
        notes += _notes(m, kind)
    if not fitted:
        raise NotIdentified("; ".join(dict.fromkeys(left)) or "no cell to fit")
    return ItemFit(kind, priors, policy, tuple(fitted), tuple(left), tuple(notes))


FEW_MODELS = 10
"""Below this many models a 2PL's discriminations are mostly their prior's (said in the notes)."""


def _notes(m: ResponseMatrix, kind: Kind) -> list[str]:
    out = []
    n = len(m.models)
    if kind == "2pl" and n < FEW_MODELS:
        out.append(f"{m.suite}, {m.condition}: {n} models; each discrimination rests on {n} answers, so its "
                   "interval is wide and the prior a ~ N(1, 1) weighs on it")
    rows: dict[bytes, str] = {}
    for k, name in enumerate(m.models):
        key = m.responses[k].tobytes()
        if key in rows:
            out.append(f"{m.suite}, {m.condition}: {rows[key]} and {name} answered every item alike (the same run "
                       "twice?); both are fitted as models")
        rows.setdefault(key, name)
    return out


def save(f: ItemFit, out: Path) -> list[Path]:
    """Write ``OUT/fit.json`` and ``OUT/fit.npz`` atomically (run paths relative to ``out``)."""
    make_dir(out)
    arrays: dict[str, NDArray[Any]] = {}
    cells = []
    for k, c in enumerate(f.cells):
        for name in _ARRAYS:
            arrays[f"c{k}_{name}"] = np.asarray(getattr(c, name))
        cells.append({"suite": c.suite, "condition": c.condition, "models": list(c.models),
                      "runs": [_relative(r, out) for r in c.runs], "item_ids": list(c.item_ids),
                      "loglik": c.loglik, "iterations": c.iterations, "converged": c.converged,
                      "fingerprint": c.fingerprint,
                      "human": {i: [h.verdict, h.margin, h.preferred] for i, h in c.human.items()}})
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    # fit.json names its arrays' SHA-256: a kill between the two writes, or two fits writing one
    # directory at once, leaves a pair that is refused, never one read with the other's numbers.
    meta = {"format": FORMAT, "version": VERSION, "kind": f.kind, "priors": asdict(f.priors),
            "policy": asdict(f.policy), "method": f.priors.describe(), "left_out": list(f.left_out),
            "notes": list(f.notes), "arrays_sha256": hashlib.sha256(buf.getvalue()).hexdigest(), "cells": cells}
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
            cells.append(CellFit(suite=str(c["suite"]), condition=str(c["condition"]), models=tuple(c["models"]),
                                 runs=tuple(str(Path(out) / r) for r in c["runs"]), item_ids=tuple(c["item_ids"]),
                                 responses=got["responses"].astype(np.int8), loglik=float(c["loglik"]),
                                 iterations=int(c["iterations"]), converged=bool(c["converged"]),
                                 fingerprint=str(c["fingerprint"]), human=human, **numbers))
            if cells[-1].responses.shape != (len(cells[-1].models), len(cells[-1].item_ids)):
                raise RunError(f"{Path(out) / FIT_NPZ}: cell {k}'s arrays do not match {path}")
        return ItemFit(meta["kind"], Priors(**meta["priors"]), FlagPolicy(**meta["policy"]), tuple(cells),
                       tuple(meta["left_out"]), tuple(meta["notes"]))
    except RunError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, OSError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: not a readable fit ({type(e).__name__}: {str(e)[:120]}); fit again with "
                       "`lingdiag items fit`") from None
