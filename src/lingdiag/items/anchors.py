"""Anchor files: the anchors of every cell of a fit with the item parameters an estimate needs
and the error measured by leaving models out (``lingdiag items anchors``), read back by ``items
estimate`` and by ``run``/``study`` ``--items`` (:func:`read_item_ids`). The method is
:mod:`lingdiag.items.selection`'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lingdiag.errors import ConfigError, RunError
from lingdiag.io.atomic import write_atomic
from lingdiag.io.limits import Limit, read_regular
from lingdiag.items.fitted import CellFit, ItemFit
from lingdiag.items.irt import KINDS, Array, Estimates, Kind
from lingdiag.items.matrix import ResponseMatrix
from lingdiag.items.selection import Chosen, Estimate, NoEstimate, at_random, choose, estimate, sample_estimate
from lingdiag.items.validate import HeldOut, leave_one_out, random_rms, rms
from lingdiag.reading import LoadedRun

ANCHORS_FORMAT = "lingdiag-anchors"
ANCHORS_VERSION = 1
MAX_ANCHOR_BYTES = Limit("LINGDIAG_ANCHORS_MAX_BYTES", 512 * 2**20, "bytes of an anchors file")
"""Bytes of an anchors file (it holds every fitted item's parameters)."""
VALIDATED_MODELS = 10
"""Models left out in turn to measure the error an anchors file states (spread over the abilities)."""


@dataclass(frozen=True)
class AnchorCell:
    """One cell's anchors, with the item parameters an estimate needs and the error measured."""

    suite: str
    condition: str
    kind: Kind
    item_ids: tuple[str, ...]
    """Every fitted item (the estimate predicts the unasked ones)."""
    slope: Array
    intercept: Array
    anchors: Chosen
    models: tuple[str, ...]
    """The models the item parameters were fitted on."""
    measured_error: float | None
    validation: tuple[HeldOut, ...] = ()
    unmeasured: str = ""
    """Why the error was not measured (empty where it was)."""
    method: str = "irt"
    """``irt`` (tinyBenchmarks' anchors, p-IRT estimate) or ``random`` (random items, their mean): the one
    whose error measured by leaving models out is lower (``irt`` where it was not measured)."""
    irt_error: float | None = None
    """The IRT anchors' measured error, kept where the random items won (so the comparison is on file)."""

    @property
    def anchor_ids(self) -> list[str]:
        """The anchors' item ids."""
        return [self.item_ids[int(j)] for j in self.anchors.index]


@dataclass(frozen=True)
class AnchorSet:
    """Every cell's anchors, as ``items anchors`` writes them."""

    k: int
    seed: int
    method: str
    cells: tuple[AnchorCell, ...]

    def item_ids(self, suites: Sequence[str] = ()) -> list[str]:
        """The anchors' item ids over the cells of ``suites`` (every cell where the file holds one suite)."""
        names = {c.suite for c in self.cells}
        chosen = [c for c in self.cells if c.suite in suites] or (list(self.cells) if len(names) == 1 else [])
        return sorted({i for c in chosen for i in c.anchor_ids})


def _validation_models(c: CellFit) -> list[int]:
    order = list(np.argsort(c.ability, kind="stable"))
    if len(order) <= VALIDATED_MODELS:
        return [int(k) for k in order]
    picks = np.linspace(0, len(order) - 1, VALIDATED_MODELS).round().astype(int)
    return [int(order[p]) for p in picks]


def anchor_cells(fit: ItemFit, k: int, seed: int = 0, validate: bool = True) -> AnchorSet:
    """Choose ``k`` anchors in every cell of ``fit`` and, where it has three models or more (and
    ``validate``), measure the error of the estimate by leaving models out (at most
    :data:`VALIDATED_MODELS`, spread over the abilities).
    """
    cells = []
    for c in fit.cells:
        keep = np.flatnonzero(c.fitted)
        est = Estimates(c.slope[keep], c.intercept[keep], c.slope_se[keep], c.intercept_se[keep], c.cov_ac[keep],
                        c.ability, c.ability_se, c.loglik, c.iterations, c.converged)
        chosen, method = choose(est, k, seed), "irt"
        held: list[HeldOut] = []
        why = "" if validate and len(c.models) >= 3 else "--no-validate" if not validate else \
            f"{len(c.models)} models: leaving one out needs 3"
        error = irt_error = None
        if not why:
            m = ResponseMatrix(c.suite, c.condition, c.models, c.item_ids, np.array(c.responses))
            held = leave_one_out(m, k, fit.kind, fit.priors, seed, models=_validation_models(c))
            error = irt_error = rms(held)
            # One dimension of ability cannot describe every matrix (a model's bias towards one label
            # is a second): where the IRT anchors do worse than random items would, random items it is.
            # Not where every item is an anchor: both are then exact, and rounding would pick one.
            if k < len(keep) and random_rms(held) < irt_error:
                chosen, method, error = at_random(len(keep), k, seed), "random", random_rms(held)
        cells.append(AnchorCell(c.suite, c.condition, fit.kind, tuple(c.item_ids[int(j)] for j in keep),
                                np.array(c.slope[keep]), np.array(c.intercept[keep]), chosen, c.models,
                                error, tuple(held), why, method, irt_error))
    method = (f"k-means over (slope, intercept) of the {fit.kind.upper()} fit, the item nearest each centre, "
              "weighted by its cluster's share; estimate: p-IRT (anchors' answers plus each other item's "
              "probability at the ability the anchors give)")
    return AnchorSet(k, seed, method, tuple(cells))


def save_anchors(a: AnchorSet, path: Path) -> None:
    """Write the anchors file atomically (JSON)."""
    cells = [{"suite": c.suite, "condition": c.condition, "kind": c.kind, "models": list(c.models),
              "anchors": c.anchor_ids, "weights": [round(float(w), 8) for w in c.anchors.weight],
              "measured_error": _finite(c.measured_error), "unmeasured": c.unmeasured, "method": c.method,
              "irt_error": _finite(c.irt_error),
              "validation": [{"model": h.model, "accuracy": h.accuracy, "estimate": h.estimate, "low": h.low,
                              "high": h.high, "random_se": h.random_se} for h in c.validation],
              "item_ids": list(c.item_ids), "slope": [float(x) for x in c.slope],
              "intercept": [float(x) for x in c.intercept]} for c in a.cells]
    data = {"format": ANCHORS_FORMAT, "version": ANCHORS_VERSION, "k": a.k, "seed": a.seed, "method": a.method,
            "cells": cells}
    write_atomic(path, json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n")


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def load_anchors(path: Path) -> AnchorSet:
    """The anchors file at ``path``.

    Raises:
        RunError: not an anchors file, or damaged (one line naming the file and what is wrong).
    """
    if Path(path).is_dir():
        raise RunError(f"{path}: a directory; expected the anchors file `lingdiag items anchors --out FILE` writes")
    try:
        data = json.loads(read_regular(path, MAX_ANCHOR_BYTES).decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != ANCHORS_FORMAT:
            raise RunError(f"{path}: not an anchors file (`lingdiag items anchors` writes one)")
        if data.get("version") != ANCHORS_VERSION:
            raise RunError(f"{path}, field 'version': {data.get('version')!r}; this lingdiag reads {ANCHORS_VERSION}")
        cells = []
        if not isinstance(data.get("cells"), list):
            raise RunError(f"{path}, field 'cells': expected a list of cells")
        for n, c in enumerate(data["cells"]):
            _check_cell(c, path, n)
            ids = tuple(str(i) for i in c["item_ids"])
            slope, intercept = np.asarray(c["slope"], float), np.asarray(c["intercept"], float)
            position = {i: k for k, i in enumerate(ids)}
            missing = [i for i in c["anchors"] if i not in position]
            if len(slope) != len(ids) or len(intercept) != len(ids) or missing or \
                    len(c["weights"]) != len(c["anchors"]) or not np.isfinite(slope).all() or \
                    not np.isfinite(intercept).all():
                raise RunError(f"{path}, cells[{n}]: its anchors, weights and item parameters do not match")
            held = tuple(HeldOut(str(h["model"]), float(h["accuracy"]), float(h["estimate"]), float(h["low"]),
                                 float(h["high"]), float(h["random_se"])) for h in c.get("validation", []))
            error = c.get("measured_error")
            cells.append(AnchorCell(str(c["suite"]), str(c["condition"]), c["kind"], ids, slope, intercept,
                                    Chosen(np.asarray([position[i] for i in c["anchors"]], dtype=np.int64),
                                           np.asarray(c["weights"], float)),
                                    tuple(c["models"]), None if error is None else float(error), held,
                                    str(c.get("unmeasured", "")), _method(c.get("method", "irt"), path, n),
                                    None if c.get("irt_error") is None else float(c["irt_error"])))
        return AnchorSet(int(data["k"]), int(data["seed"]), str(data["method"]), tuple(cells))
    except RunError:
        raise
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OSError) as e:
        raise RunError(f"{path}: not a readable anchors file ({type(e).__name__}: {str(e)[:120]})") from None


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)


def _check_cell(c: Any, path: Path, n: int) -> None:
    """One cell of an anchors file against its schema (one line naming the file, cell and field).

    Raises:
        RunError: a field of the wrong type, an unknown item model or method, a weight that is not a finite
            number ≥ 0, weights not summing to 1, an error that is not a finite number ≥ 0.
    """
    where = f"{path}, cells[{n}]"
    if not isinstance(c, dict):
        raise RunError(f"{where}: expected an object")
    for name in ("suite", "condition"):
        if not isinstance(c.get(name), str):
            raise RunError(f"{where}, field {name!r}: expected a string")
    if c.get("kind") not in KINDS:
        raise RunError(f"{where}, field 'kind': {c.get('kind')!r}; expected {' or '.join(KINDS)}")
    for name in ("item_ids", "anchors", "models"):
        if not isinstance(c.get(name), list) or not all(isinstance(v, str) for v in c[name]):
            raise RunError(f"{where}, field {name!r}: expected a list of strings")
    for name in ("weights", "slope", "intercept"):
        values = c.get(name)
        if not isinstance(values, list) or not _numbers(values) or not all(math.isfinite(v) for v in values):
            raise RunError(f"{where}, field {name!r}: expected a list of finite numbers")
    weights = c["weights"]
    if any(w < 0 for w in weights) or (weights and abs(sum(weights) - 1) > 1e-6):
        raise RunError(f"{where}, field 'weights': expected numbers ≥ 0 summing to 1 (they sum to {sum(weights):g})")
    for name in ("measured_error", "irt_error"):
        v = c.get(name)
        if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0):
            raise RunError(f"{where}, field {name!r}: {v!r}; expected a finite number ≥ 0 or null")


def read_item_ids(path: Path, suites: Sequence[str] = ()) -> list[str]:
    """The item ids a run keeps for ``--items FILE``: an anchors file's anchors (of ``suites``' cells),
    or a text file with one item id per line (blank lines and ``#`` comments skipped).

    Raises:
        ConfigError: no id in the file (or none for these suites).
    """
    raw = read_regular(path, MAX_ANCHOR_BYTES)
    if raw.lstrip()[:1] == b"{":
        a = load_anchors(path)
        ids = a.item_ids(suites)
        if not ids:
            have = ", ".join(sorted({c.suite for c in a.cells}))
            raise ConfigError(f"{path}: no anchors for suite {', '.join(suites) or '?'} (the file has {have})")
        return ids
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    ids = list(dict.fromkeys(s.strip() for s in text.split("\n") if s.strip() and not s.lstrip().startswith("#")))
    if not ids:
        raise ConfigError(f"{path}: no item id (one per line)")
    return ids


def estimate_run(a: AnchorSet, run: LoadedRun, condition: str | None = None) -> list[tuple[AnchorCell, Estimate]]:
    """The estimate of every cell of ``a`` the run answered.

    Raises:
        NoEstimate: the run is of another suite, or answered no anchor of a cell.
    """
    names = {run.suite_title, run.suite.name}
    cells = [c for c in a.cells if c.suite in names and (condition is None or c.condition == condition)]
    if not cells:
        have = ", ".join(sorted({f"{c.suite}/{c.condition}" for c in a.cells}))
        raise NoEstimate(f"{run.path}: suite {run.suite_title}{'/' + condition if condition else ''}; the anchors "
                         f"are for {have}")
    by_condition: dict[str, dict[str, bool]] = {}
    for r in run.records:
        if r.error is None and r.correct is not None:
            by_condition.setdefault(r.condition, {})[r.item_id] = bool(r.correct)
    out = []
    for c in cells:
        answered = by_condition.get(c.condition, {})
        position = {i: k for k, i in enumerate(c.item_ids)}
        answers = {position[i]: v for i, v in answered.items() if i in position}
        if not any(int(j) in answers for j in c.anchors.index):
            raise NoEstimate(f"{run.path}: no graded answer to any anchor of {c.suite}/{c.condition} "
                             f"({len(c.anchors.index)} anchors); run them with --items")
        out.append((c, ESTIMATES[c.method](c, answers)))
    return out


ESTIMATES: dict[str, Callable[[AnchorCell, Mapping[int, bool]], Estimate]] = {
    "irt": lambda c, answers: estimate(c.slope, c.intercept, c.anchors, answers, c.measured_error,
                                       measured_on=len(c.validation)),
    "random": lambda c, answers: sample_estimate(len(c.item_ids), c.anchors, answers),
}
"""An anchors file's method → how a run's answers to its anchors become an estimate."""


def _method(value: Any, path: Path, n: int) -> str:
    if value not in ESTIMATES:
        raise RunError(f"{path}, cells[{n}], field 'method': {value!r}; expected {' or '.join(ESTIMATES)}")
    return str(value)
