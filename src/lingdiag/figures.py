"""Figures as PNG bytes: the record suites return and the matplotlib plumbing they share.

matplotlib is the optional ``plots`` extra and is imported only inside the functions that
draw, with the Agg backend (no display needed).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

from lingdiag.errors import MissingDependency


@dataclass(frozen=True, slots=True)
class Figure:
    """One rendered figure."""

    title: str
    png: bytes
    caption: str = ""


def available() -> bool:
    """Whether matplotlib (the ``plots`` extra) is installed."""
    return find_spec("matplotlib") is not None


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; a one-line error when the extra is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise MissingDependency("figures", "plots", ["matplotlib>=3.8"]) from e
    return plt


def model_colours(models: Iterable[str]) -> dict[str, str]:
    """One colour per model, by the models' sorted names (matplotlib's ``C0``, ``C1``, ...): every
    figure drawn from the same models gives a model the same colour, whatever it draws first or
    leaves out.
    """
    return {m: f"C{k % 10}" for k, m in enumerate(sorted(set(models)))}


def to_png(fig: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes and close it."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
