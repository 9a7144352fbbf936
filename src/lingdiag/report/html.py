"""A self-contained HTML report: counts, tables, inline PNG figures, analyses and an item browser.

One file with no external resources; figures are base64 PNG data URIs, and the only script is
the item browser's (:mod:`.browser`), allowed by hash in the page's Content-Security-Policy.
Everything that comes from a run (model output, prompts, dataset text, model names) is
untrusted: it passes through ``html.escape`` here, or reaches the page as JSON shown with
``textContent``; only this module's own markup is raw.

Figures and analyses come from each suite's ``Suite.figures`` and ``Suite.analyses``; this
module knows no suite.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from lingdiag import figures as figs
from lingdiag.atomic import make_dir, write_atomic
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.metrics.core import CI_METHODS, WILSON, fmt
from lingdiag.report import browser, markdown
from lingdiag.report.tables import rows_by_suite
from lingdiag.store import LoadedRun
from lingdiag.suite import SUITES

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:.3em 0;font-size:.8em}
img{max-width:100%} .note{color:#8a5a00} .filters label{margin-right:1em;white-space:nowrap}
tr.item{cursor:pointer} tr.item:hover{background:#f5f5ff} tr.correct td:last-child{color:#282}
tr.wrong td:last-child{color:#b22} tr.unparsed td:last-child,tr.failed td:last-child{color:#b70}
"""


def markdown_to_html(text: str) -> str:
    """Render the markdown the tables and analyses produce (:mod:`.markdown`), all text escaped."""
    out: list[str] = []
    for block in markdown.blocks(text):
        if isinstance(block, markdown.Heading):
            level = min(block.level + 1, 6)
            out.append(f"<h{level}>{escape(block.text)}</h{level}>")
        elif isinstance(block, markdown.Table):
            head = "".join(f"<th>{escape(c)}</th>" for c in block.header)
            rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in block.rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(block, markdown.Bullets):
            out.append("<ul>" + "".join(f"<li>{escape(i)}</li>" for i in block.items) + "</ul>")
        else:
            out.append(f"<p>{escape(block.text)}</p>")
    return "\n".join(out)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _counts(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        for row in run.rows:
            m = row.metrics
            rate = m.get("unparsed_rate")
            rows.append([str(run.path), run.model, row.condition, m.get("n", ""), m.get("n_unparsed", ""),
                         f"{rate:.1%}" if isinstance(rate, float) else "", m.get("n_errors", "")])
    return _table(["Run", "Model", "Condition", "n", "Unparsed", "Unparsed rate", "Errors"], rows)


def _ci95(metrics: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any, list[Any]]]:
    """``(metric path, value, interval)`` for every ``<metric>_ci95`` beside its ``<metric>``, nested
    dicts included (ExpliCa's ``spearman/all/rho``).
    """
    for key, x in metrics.items():
        if key.endswith("_ci95") and isinstance(x, list) and len(x) == 2:
            yield path + key.removesuffix("_ci95"), metrics.get(key.removesuffix("_ci95")), x
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
    return _table(["Model", "Condition", "Metric", "Value", "95% interval", "Method"], rows) if rows else ""


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _figures(runs: Sequence[LoadedRun]) -> str:
    parts = []
    for name, rows in rows_by_suite(runs).items():
        draw = SUITES.get(name).figures
        if draw is None:
            continue
        if not figs.available():
            parts.append(_note(f"{name}: figures need matplotlib: pip install 'lingdiag[plots]'"))
            continue
        try:
            drawn = draw(rows)
        except LingdiagError as e:
            parts.append(_note(f"{name}: no figures: {e}"))
            continue
        shown = []
        for f in drawn:
            data = base64.b64encode(f.png).decode("ascii")
            shown.append(f"<figure><img alt=\"{escape(f.title)}\" src=\"data:image/png;base64,{data}\">"
                         f"<figcaption><b>{escape(f.title)}.</b> {escape(f.caption)}</figcaption></figure>")
        parts.append(f'<section class="figures" data-suite="{escape(name)}"><h3>{escape(name)}</h3>'
                     + "".join(shown) + "</section>")
    return "\n".join(parts)


def _analyses(runs: Sequence[LoadedRun]) -> str:
    parts = []
    for name, rows in rows_by_suite(runs).items():
        analyse = SUITES.get(name).analyses
        if analyse is None:
            continue
        try:
            parts.append(markdown_to_html(analyse(rows)))
        except LingdiagError as e:
            parts.append(_note(f"{name}: analyses unavailable: {e}"))
    return "\n".join(parts)


def render_html(text: str, runs: Sequence[LoadedRun]) -> str:
    """The report page.

    Args:
        text: The markdown tables (``report.tables.combined``).
        runs: The runs, in the order given.

    Returns:
        A complete HTML document.
    """
    # Only the browser's own script may run; images only from data: URIs; nothing from the network.
    csp = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {browser.script_hash()}"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        "<title>lingdiag report</title>", f"<style>{_STYLE}</style></head><body>",
        f"<h1>lingdiag report: {len(runs)} run{'s' * (len(runs) != 1)}</h1>",
        "<h2>Counts</h2>", _counts(runs),
        "<h2>Tables</h2>", markdown_to_html(text),
        "<h2>Intervals</h2>", _intervals(runs),
        "<h2>Figures</h2>", _figures(runs),
        "<h2>Analyses</h2>", _analyses(runs),
        "<h2>Items</h2>", browser.section(runs),
        "</body></html>",
    ]) + "\n"


def write_html(path: Path, text: str, runs: Sequence[LoadedRun]) -> None:
    """Write the report for ``runs`` to ``path`` (called by ``report.tables.combined``).

    Args:
        path: The HTML file to write.
        text: The markdown tables.
        runs: The runs, in the order given.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"--html {path}: a directory; give a file name such as {path / 'report.html'}")
    make_dir(path.parent)
    write_atomic(path, render_html(text, runs))
