"""Run records as one tidy pandas DataFrame, for people who analyse in notebooks
(``lingdiag.load("runs/a", "runs/b")``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingdiag.records import UNPARSED
from lingdiag.store import RunStore, model_name

if TYPE_CHECKING:
    import pandas as pd


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return str(value.get("text", value.get("error", "")))
    if isinstance(value, list):
        return "\n".join(f"[{m.get('role')}]\n{m.get('content')}" if isinstance(m, dict) else str(m) for m in value)
    return "" if value is None else str(value)


def load(*runs: str | Path) -> pd.DataFrame:
    """One row per item record of every run: run, suite, model, dataset, condition, one
    ``axis.<name>`` column per axis, item id, one ``tag.<name>`` column per item tag, label, gold,
    correct, unparsed, error, the first prompt and the first raw output (both as text).
    """
    import pandas as pd

    rows = []
    for path in runs:
        store = RunStore(Path(path))
        meta = store.read_json("meta.json")
        head = {"run": str(path), "suite": meta["config"]["suite"], "dataset": str(meta["config"].get("dataset", "")),
                "model": model_name(meta)}
        for r in store.load_records():
            rows.append({**head, "condition": r.condition, **{f"axis.{k}": v for k, v in r.axes.items()},
                         "item_id": r.item_id,
                         **{f"tag.{k}": v for k, v in r.tags.items() if not isinstance(v, dict | list)},
                         "label": r.label, "gold": r.gold, "correct": r.correct, "unparsed": r.label == UNPARSED,
                         "error": r.error, "prompt": _text(r.prompts[0]) if r.prompts else "",
                         "output": _text(r.outputs[0]) if r.outputs else ""})
    return pd.DataFrame(rows)
