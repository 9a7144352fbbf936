"""Run records as one tidy pandas DataFrame, for people who analyse in notebooks
(``lingdiag.load("runs/a", "runs/b")``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingdiag.errors import ConfigError
from lingdiag.metrics.core import reasoning_tokens
from lingdiag.reading import records_of
from lingdiag.records import UNFINISHED, UNPARSED, record_text
from lingdiag.rundir import RunStore

if TYPE_CHECKING:
    import pandas as pd


def _cell(value: Any) -> Any:
    """A scalar as it is; a list or mapping as JSON text (one cell, comparable across rows)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict | list) else value


def _run_paths(runs: tuple[Any, ...]) -> list[Path]:
    """The run directories given one by one or as lists (``load(a, b)`` and ``load([a, b])``)."""
    paths: list[Path] = []
    for run in runs:
        if isinstance(run, list | tuple):
            paths.extend(_run_paths(tuple(run)))
        elif isinstance(run, str | Path):
            paths.append(Path(run))
        else:
            raise ConfigError(f"lingdiag.load takes run directories (str or Path, or lists of them), "
                              f"not {type(run).__name__}")
    return paths


def load(*runs: str | Path | list[str | Path] | tuple[str | Path, ...]) -> pd.DataFrame:
    """One row per item record of every run: run, suite, model, dataset, condition, one
    ``axis.<name>`` column per axis, item id, one ``tag.<name>`` column per item tag, one
    ``field.<name>`` column per item field (the premise, the sentence...), label, gold, correct,
    unparsed, unfinished (thinking that never closed), reasoning_tokens (None where the model
    thought nothing or the backend did not count), error, one ``detail.<name>`` column per key of
    the records' ``detail`` (the parse rule,
    log-probabilities, surprisals...; a nested value as JSON text), and the record's prompts and raw
    outputs as text (:func:`lingdiag.records.as_text`; several requests of one item, such as the
    log-likelihood of each option, separated by ``---`` lines). Runs may also come as one list.

    Raises:
        ConfigError: A run is neither a path nor a list of paths.
    """
    import pandas as pd

    rows = []
    for path in _run_paths(runs):
        store = RunStore(path)
        meta = store.read_meta()
        head = {"run": str(path), "suite": meta.suite, "dataset": meta.dataset, "model": meta.model}
        for r in records_of(path):
            rows.append({**head, "condition": r.condition, **{f"axis.{k}": v for k, v in r.axes.items()},
                         "item_id": r.item_id,
                         **{f"tag.{k}": v for k, v in r.tags.items() if not isinstance(v, dict | list)},
                         **{f"field.{k}": _cell(v) for k, v in r.fields.items()},
                         "label": r.label, "gold": r.gold, "correct": r.correct, "unparsed": r.label == UNPARSED,
                         "unfinished": r.label == UNFINISHED, "reasoning_tokens": reasoning_tokens(r),
                         "error": r.error, **{f"detail.{k}": _cell(v) for k, v in r.detail.items()},
                         "prompt": record_text(r.prompts), "output": record_text(r.outputs)})
    return pd.DataFrame(rows)
