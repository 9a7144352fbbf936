"""Builders shared by the tests: the ``lingdiag`` command line as a real process, item
records and result rows with every field a test does not care about filled in."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lingdiag.records import ItemRecord, ResultRow

SRC = str(Path(__file__).resolve().parents[1] / "src")
"""This checkout's source, put first on the child's ``PYTHONPATH``."""


def lingdiag(cwd: Path, *args: str, env: Mapping[str, str] | None = None, inherit: bool = False,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m lingdiag ARGS`` run in ``cwd``, output captured as text.

    The child sees only ``PATH``, a response cache under ``cwd`` and this checkout's source
    (plus ``env``), so nothing of the developer's environment leaks in; ``inherit`` passes
    the whole environment on instead.
    """
    base = dict(os.environ) if inherit else {"PATH": "/usr/bin:/bin", "LINGDIAG_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**base, "PYTHONPATH": SRC, **(env or {})})


def item_record(item_id: str, label: str, gold: str | None, *, condition: str = "c",
                axes: Mapping[str, str] | None = None, tags: Mapping[str, str] | None = None,
                fields: Mapping[str, Any] | None = None, detail: Mapping[str, Any] | None = None,
                error: str | None = None) -> ItemRecord:
    """One answered item: ``correct`` is ``label == gold`` (None without a gold label or with an error)."""
    return ItemRecord(condition=condition, axes=dict(axes or {}), item_id=item_id, tags=dict(tags or {}),
                      fields=dict(fields or {}), prompts=[], outputs=[], label=label, detail=dict(detail or {}),
                      gold=gold, correct=None if gold is None or error else label == gold, error=error)


def result_row(model: str, condition: str, metrics: dict[str, Any], axes: dict[str, str] | None = None) -> ResultRow:
    """A result row as a run directory would give it (axes default to ``{"strategy": condition}``)."""
    return ResultRow(model, condition, axes if axes is not None else {"strategy": condition}, metrics)
