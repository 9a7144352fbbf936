"""Counts, intervals and provenance, collapsed at the end of the page."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from typing import Any

from lingdiag.io.markdown import fmt
from lingdiag.metrics.core import CI_METHODS, N_ERRORS, N_UNPARSED, UNPARSED_RATE, WILSON, N
from lingdiag.reading import LoadedRun
from lingdiag.report.markup import shown_path, table_html
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link


def _counts(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        for row in run.rows:
            m = row.metrics
            rate = m.get(UNPARSED_RATE)
            rows.append([run.name, run.model, row.condition, m.get(N, ""), m.get(N_UNPARSED, ""),
                         f"{rate:.1%}" if isinstance(rate, float) else "", m.get(N_ERRORS, "")])
    return table_html(["Run", "Model", "Condition", "n", "Unparsed", "Unparsed rate", "Errors"], rows)


def _ci95(metrics: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any, list[Any]]]:
    """``(metric path, value, interval)`` for every ``<metric>_ci95`` beside its ``<metric>``, nested
    dicts included (ExpliCa's ``spearman/all/rho``).
    """
    for key, x in metrics.items():
        base = key.removesuffix("_ci95")
        if key.endswith("_ci95") and isinstance(x, list) and len(x) == 2:
            yield path + base, metrics.get(base), x
        elif key.endswith("_ci95") and isinstance(x, Mapping) and isinstance(values := metrics.get(base), Mapping):
            # A metric per tag value (a suite file's ``by``): its intervals by the same keys.
            yield from ((f"{path}{base}/{g}", values.get(g), ci) for g, ci in x.items()
                        if isinstance(ci, list) and len(ci) == 2)
        elif isinstance(x, Mapping) and key != CI_METHODS:
            yield from _ci95(x, f"{path}{key}/")


def _intervals(runs: Sequence[LoadedRun]) -> str:
    """Every 95% interval the suites' metrics hold (``<metric>_ci95``), beside its value and method.

    ``ci95_methods`` names the method by the interval's key, or by the top-level key holding a
    nested one; Wilson's score interval otherwise.
    """
    rows = []
    for run in runs:
        for row in run.rows:
            methods = row.metrics.get(CI_METHODS, {})
            for name, value, ci in _ci95(row.metrics):
                method = methods.get(f"{name}_ci95", methods.get(name.split("/")[0], WILSON))
                rows.append([row.model, row.condition, name, fmt(value, 3),
                             f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]", method])
    return table_html(["Model", "Condition", "Metric", "Value", "95% interval", "Method"], rows) if rows else ""


def _shown_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's configuration as a report shows it: a path of the machine it ran on by its last parts."""
    return {k: shown_path(v) if isinstance(v, str) else v for k, v in config.items()}


def _provenance(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        meta = run.meta
        rows.append([run.name, run.suite_title, run.model, meta.identity.backend, meta.identity.weights_sha256,
                     ", ".join(f"{shown_path(k)} {v}" for k, v in (meta.checksums or {}).items()),
                     ", ".join(f"{k} {v}" for k, v in (meta.versions or {}).items()),
                     "" if meta.seed is None else meta.seed])
    table = table_html(["Run", "Suite", "Model", "Backend", "Weights SHA-256", "Dataset", "Versions", "Seed"], rows)
    configs = "".join(f"<h4>{escape(run.name)}</h4><pre>{escape(_json(_shown_config(run.meta.config)))}</pre>"
                      for run in runs)
    return table + configs


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str)


class Details:
    """Counts, intervals and provenance."""

    title = "Counts, intervals and provenance"
    order = 50

    def applies_to(self, page: Page) -> bool:
        """Always."""
        return True

    def render(self, page: Page) -> list[Fragment]:
        """The three collapsed tables."""
        runs = page.runs
        html = "\n".join([
            f'<section id="details"><h2>{self.title}</h2>',
            "<details><summary>Counts</summary>", _counts(runs), "</details>",
            "<details><summary>Intervals</summary>", _intervals(runs), "</details>",
            "<details><summary>Provenance (config, versions, checksums)</summary>", _provenance(runs), "</details>",
            "</section>"])
        return [Fragment(html, (Link("details", "Counts, intervals, provenance"),))]


SECTIONS.register("details")(Details())
