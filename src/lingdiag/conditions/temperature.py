"""The temperature axis: every suite's generated conditions once per sampling temperature.

``lingdiag run SUITE --temperature 0,0.7,1`` (or ``axes: {temperature: [0, 0.7, 1]}`` in a study) runs
each condition once per temperature: its generation requests carry ``Sampling`` (seeded by the run's
seed, so a run repeats), temperature 0 staying greedy; the condition is named
``<condition>/temperature-<t>`` (``t`` as short as reads back as the same number, so two temperatures
never share a name; only a plain decimal is a temperature: ``0_5``, ``inf`` and other scripts' digits
are refused) with ``temperature`` in its axes, so tables split by it and reports,
the viewer and studies show it like any axis. Log-likelihood requests are not sampled and are left as
they are. A backend that cannot sample is refused before anything runs. ``meta.json`` records the
part ``temperature``: condition → its temperature and seed.

The whole axis is this module: it registers itself and its ``meta.json`` part.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from lingdiag.conditions.expander import Plain, Ran
from lingdiag.conditions.registry import register_axis
from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError
from lingdiag.records import GenerationRequest, Item, Prediction, Request, Response, Sampling
from lingdiag.rundir.parts import Number, Part, register_part
from lingdiag.suite import Condition, Strategy

if TYPE_CHECKING:
    from lingdiag.models.base import Backend, Capabilities

AXIS = "temperature"
MAX_TEMPERATURE = 5.0


class TemperaturePart(Part):
    """One condition's sampling, as ``meta.json`` records it."""

    temperature: Number
    seed: int


_DECIMAL = re.compile(r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A decimal number as written (``0.7``, ``1e-2``): Python's ``float`` also takes ``0_5`` (5), other
scripts' digits and ``inf``, none of which is a temperature someone meant."""


def _parse(value: str) -> float:
    t = float(value) if _DECIMAL.fullmatch(value) else math.nan
    if not 0 <= t <= MAX_TEMPERATURE:  # NaN fails too
        raise ConfigError(f"--{AXIS} {value!r}: expected a number from 0 to {MAX_TEMPERATURE:g}")
    return t


def named(t: float) -> str:
    """``t`` as condition names and axes write it: short (``0.7``, ``1``) where that reads back as ``t``,
    else every digit it needs (``0.1234561``), so that two temperatures never share a name.
    """
    short = f"{t:g}"
    return short if float(short) == t else repr(t)


@dataclass(frozen=True, slots=True)
class SampledStrategy:
    """A suite's strategy whose generation requests are sampled at one temperature; parsing is the suite's."""

    inner: Strategy
    sampling: Sampling | None
    """None: greedy (temperature 0)."""

    def render(self, item: Item) -> Sequence[Request]:
        """The inner strategy's requests, generations sampled."""
        return [replace(r, sampling=self.sampling) if isinstance(r, GenerationRequest) else r
                for r in self.inner.render(item)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        """The inner strategy's prediction."""
        return self.inner.parse(item, responses)


@dataclass(frozen=True)
class TemperatureAxis(Plain):
    """``--temperature``: each condition once per temperature; ``meta.json``'s ``temperature`` part."""

    temperatures: tuple[float, ...] = ()
    seed: int = 0
    part: ClassVar[str] = AXIS
    takes: ClassVar[tuple[str, ...]] = (AXIS,)

    @classmethod
    def of(cls, config: RunConfig) -> TemperatureAxis:
        """The temperatures ``config`` names (none: the conditions stay as the suite makes them)."""
        values = config.axes.get(AXIS)
        if values is not None and not values:
            raise ConfigError(f"--{AXIS} names no temperature")
        return cls(tuple(dict.fromkeys(_parse(v) for v in values or ())), config.seed)

    def expand(self, conditions: Sequence[Condition]) -> list[Condition]:
        """Each condition once per temperature."""
        return [Condition(f"{c.name}/{AXIS}-{named(t)}", {**c.axes, AXIS: named(t)},
                          SampledStrategy(c.strategy, Sampling(t, self.seed) if t > 0 else None), c.items)
                for c in conditions for t in self.temperatures] if self.temperatures else list(conditions)

    def require(self, capabilities: Capabilities, backend: str) -> None:
        """Refuse a backend that would answer greedily where a sample was asked for (when planned)."""
        if any(t > 0 for t in self.temperatures) and not capabilities.sampling:
            raise ConfigError(f"--{AXIS}: backend {backend} cannot sample; run temperature 0 only, or a "
                              "backend that samples (embedded, hf:, gguf:, openai:)")

    def check(self, backend: Backend) -> None:
        """:meth:`require` of the loaded ``backend`` (a run given its backend is planned with it)."""
        self.require(backend.capabilities, str(backend.identity.get("backend")))

    def recorded(self, ran: Ran) -> dict[str, Any] | None:
        """Condition → its temperature and seed, for the conditions sent to the backend."""
        return {c.name: {"temperature": float(c.axes[AXIS]), "seed": self.seed} for c in ran.conditions
                if AXIS in c.axes and c.name not in ran.declined} or None


register_part(AXIS, dict[str, TemperaturePart])
register_axis(AXIS, order=50, flags={AXIS: f"T[,T...], each from 0 to {MAX_TEMPERATURE:g}: every generated condition "
                                     "once per sampling temperature (0: greedy), seeded by --seed; on backends "
                                     "that sample (embedded, hf:, gguf:, openai:; top_p and top_k are "
                                     "--model-option)"})(TemperatureAxis.of)
