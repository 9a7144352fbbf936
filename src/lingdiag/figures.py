"""Figures as PNG bytes: the record suites return and the matplotlib plumbing they share.

matplotlib is the optional ``plots`` extra and is imported only inside the functions that
draw, with the Agg backend (no display needed).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
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
    legend: tuple[tuple[str, str], ...] = ()
    """The models drawn as series and their colours (the report's :class:`ModelColours`), shown as a key."""


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


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
"""matplotlib's default colour cycle (``C0``-``C9``, tab10) as hex, so that the HTML can show the same swatches."""


@dataclass(frozen=True, slots=True)
class ModelColours:
    """One colour per model for a whole report, built once from every model it shows: a figure that
    draws only some of them, or draws them in another order, gives each the colour it has everywhere.
    """

    by_model: Mapping[str, str]

    @classmethod
    def of(cls, models: Iterable[str]) -> ModelColours:
        """The map of ``models`` (repeats and order ignored): by sorted name, along :data:`PALETTE`."""
        return cls({m: PALETTE[k % len(PALETTE)] for k, m in enumerate(sorted(set(models)))})

    def __getitem__(self, model: str) -> str:
        return self.by_model[model]

    def legend(self, models: Iterable[str]) -> tuple[tuple[str, str], ...]:
        """The (model, colour) pairs a figure drew, in the map's order, for its caption's key."""
        drawn = set(models)
        return tuple((m, c) for m, c in self.by_model.items() if m in drawn)


def to_png(fig: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes and close it."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
