"""Data handed over in memory: a pandas DataFrame, or anything with ``to_dict("records")``, given
as ``RunConfig(dataset=...)`` in the Python API.

The rows are held by this process under a name made of their content's SHA-256
(``rows:<sha256>``), so ``meta.json`` records the data's identity, a resume compares it like any
dataset spec, and the same rows always get the same name (the items, and so ``items.jsonl``, do
not depend on the object that carried them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

PREFIX = "rows:"
_HELD: dict[str, list[dict[str, Any]]] = {}


def holds_rows(value: object) -> bool:
    """Whether ``value`` hands over rows (it has ``to_dict``; a DataFrame)."""
    return callable(getattr(value, "to_dict", None)) and not isinstance(value, Mapping)


def hold(value: Any) -> str:
    """Keep the rows of ``value`` (``value.to_dict("records")``) and return their ``rows:`` name.

    Raises:
        ValueError: ``to_dict("records")`` does not give a list of mappings (pydantic reports it
            as the field's error).
    """
    try:
        rows = value.to_dict("records")
    except TypeError as e:
        raise ValueError(f"{type(value).__name__}.to_dict('records') failed: {e}") from None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise ValueError(f"{type(value).__name__}.to_dict('records') did not give a list of rows")
    records = [{str(k): v for k, v in r.items()} for r in rows]
    canonical = json.dumps(records, sort_keys=True, ensure_ascii=False, default=str)
    name = PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    _HELD[name] = records
    return name


def held(spec: str) -> list[dict[str, Any]] | None:
    """The rows held under ``spec`` (a ``rows:`` name), or None when this process holds none."""
    return _HELD.get(spec)
