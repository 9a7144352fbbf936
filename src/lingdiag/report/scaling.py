"""The scaling figure: a suite's headline metric against parameter count, one line per model family,
with the metric's 95% intervals, for any set of runs (built-in suites and suite files alike).

The parameter count is the one the backend recorded in ``meta.json`` (``model.n_params``). A
model's family is the one given (``lingdiag report --family MODEL=FAMILY``), else the
``model_type`` of the ``config.json`` in the model directory the backend recorded, by its readable
name (``llama`` → Llama, ``gemma3_text`` → Gemma 3), else the model's own name.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.figures import Figure, ModelColours, pyplot, to_png
from lingdiag.io.limits import MODEL_CONFIG_BYTES, read_regular
from lingdiag.reading import LoadedRun

MAX_PANELS = 6
"""Conditions drawn as panels at most."""


def parse_families(given: Sequence[str]) -> dict[str, str]:
    """``MODEL=FAMILY`` options → model → family.

    Raises:
        ConfigError: an option without ``=`` or with an empty side.
    """
    out = {}
    for option in given:
        model, sep, family = option.partition("=")
        if not sep or not model.strip() or not family.strip():
            raise ConfigError(f"--family {option!r}: expected MODEL=FAMILY, e.g. smollm2-135m=SmolLM2")
        out[model.strip()] = family.strip()
    return out


FAMILY_NAMES = {"llama": "Llama", "mistral": "Mistral", "gemma": "Gemma", "gemma2": "Gemma 2", "gemma3": "Gemma 3",
                "qwen2": "Qwen2", "qwen3": "Qwen3", "phi3": "Phi-3", "gpt2": "GPT-2", "olmo2": "OLMo 2",
                "smollm3": "SmolLM3"}
"""transformers' ``model_type`` → the family's name as readers know it (a legend shows names, not keys)."""


def family_name(model_type: str) -> str:
    """The readable name of a ``model_type``: ``gemma3_text`` → ``Gemma 3``; an unknown one as given,
    without the ``_text`` suffix of a text-only half.
    """
    base = model_type.removesuffix("_text")
    return FAMILY_NAMES.get(base, base)


def config_family(run: LoadedRun) -> str | None:
    """The family of the ``model_type`` of the model directory's ``config.json`` the run recorded, if readable."""
    path = run.meta.identity.fields.get("path")
    if not isinstance(path, str) or not path:
        return None
    config = Path(path) / "config.json" if Path(path).is_dir() else Path(path).parent / "config.json"
    if not config.exists():
        return None
    try:  # a FIFO or a link to /dev/zero where config.json was is a RunError naming it, never a hang
        kind = json.loads(read_regular(config, MODEL_CONFIG_BYTES).decode("utf-8")).get("model_type")
    except (ValueError, AttributeError):
        return None
    return family_name(kind) if isinstance(kind, str) and kind else None


@dataclass(frozen=True, slots=True)
class Point:
    """One run's condition: the metric at the model's size, with its interval."""

    family: str
    model: str
    condition: str
    n_params: float
    value: float
    ci95: tuple[float, float] | None


def points(suite: str, runs: Sequence[LoadedRun], families: Mapping[str, str]) -> list[Point]:
    """The scaling points of ``suite``'s headline metric over ``runs`` (runs without a size left out)."""
    mine = [run for run in runs if run.suite_title == suite]
    metric = mine[0].suite.headline if mine else ""
    if not metric:
        return []
    out = []
    for run in mine:
        if run.meta.n_params is None:
            continue
        model = run.model
        family = families.get(run.model) or families.get(model) or config_family(run) or model
        for row in run.rows:
            value = row.metrics.get(metric)
            if not isinstance(value, int | float) or not math.isfinite(value):
                continue
            ci = row.metrics.get(f"{metric}_ci95")
            bounds = (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 and \
                all(isinstance(v, int | float) for v in ci) else None
            out.append(Point(family, model, row.condition, run.meta.n_params, float(value), bounds))
    return out


def _size(n: float) -> str:
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"


def scaling_figure(suite: str, runs: Sequence[LoadedRun], families: Mapping[str, str]) -> Figure | None:
    """The figure, or None where fewer than two model sizes are known."""
    found = points(suite, runs, families)
    if len({p.n_params for p in found}) < 2:
        return None
    plt = pyplot()
    metric = next(run.suite.headline for run in runs if run.suite_title == suite)
    conditions = list(dict.fromkeys(p.condition for p in found))[:MAX_PANELS]
    ticks = sorted({p.n_params for p in found})
    colours = ModelColours.of(p.family for p in found)  # a family keeps its colour in a panel that lacks another
    fig, axes = plt.subplots(1, len(conditions), figsize=(3.4 * len(conditions) + 1.2, 3.4), squeeze=False,
                             sharey=True, layout="constrained")
    for ax, condition in zip(axes[0], conditions, strict=True):
        lines: dict[str, list[Point]] = defaultdict(list)
        for p in found:
            if p.condition == condition:
                lines[p.family].append(p)
        for family, members in sorted(lines.items()):
            members.sort(key=lambda p: p.n_params)
            ys = [p.value for p in members]
            lo = [p.value - p.ci95[0] if p.ci95 else 0.0 for p in members]
            hi = [p.ci95[1] - p.value if p.ci95 else 0.0 for p in members]
            ax.errorbar([p.n_params for p in members], ys, yerr=[lo, hi], fmt="-o", capsize=3, label=family,
                        color=colours[family])
        ax.set_xscale("log")
        ax.set_xticks(ticks, [_size(n) for n in ticks], fontsize=7)
        ax.minorticks_off()  # log-scale minor labels overlap over one decade
        ax.set_xlabel("parameters")
        ax.set_title(condition, fontsize=8)
    axes[0][0].set_ylabel(metric)
    axes[0][-1].legend(fontsize=7, title="family")
    sizes = ", ".join(f"{m} {_size(n)}" for m, n in sorted({(p.model, p.n_params) for p in found}))
    ignored = "".join(f" {run.name}: {run.meta.identity.n_params_problem}." for run in runs
                      if run.suite_title == suite and run.meta.identity.n_params_problem)
    return Figure(f"{suite}: {metric} by model size", to_png(fig),
                  f"One line per model family; bars: 95% intervals. Parameter counts as the backends recorded "
                  f"them ({sizes}).{ignored}")
