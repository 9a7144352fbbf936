"""A self-contained HTML report that opens with its findings.

Layout: a navigation sidebar; a summary (each suite's headline metric per model, its headline
table beside its main figure, the statistically supported differences, the conditions that are
not interpretable); one section per suite with its other tables, figures and analyses; the item
browser; counts, intervals and provenance collapsed at the end. Degenerate conditions
(:mod:`.findings`) are greyed with their reason in every table row and figure caption that
shows them.

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
import json
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from lingdiag import figures as figs
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.figures import Figure
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.markdown import fmt
from lingdiag.loading import LoadedRun
from lingdiag.metrics.core import CI_METHODS, N_ERRORS, N_UNPARSED, UNPARSED_RATE, WILSON, N
from lingdiag.report import browser, markdown
from lingdiag.report.budget import budget_figure
from lingdiag.report.findings import Degenerate, degenerate, differences, headline
from lingdiag.report.scaling import scaling_figure
from lingdiag.report.tables import rows_by_suite, suite_tables
from lingdiag.suite import SUITES

# td,li,pre: each takes the direction of its first strong letter (as dir="auto" does), so Hebrew or
# Arabic text reads right to left inside the left-to-right page.
_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
td,li,pre{unicode-bidi:plaintext}
nav#toc{position:fixed;top:0;left:0;bottom:0;width:190px;overflow-y:auto;background:#f6f6f8;
 border-right:1px solid #ddd;padding:.8em;font-size:.85em;box-sizing:border-box}
nav#toc a{display:block;color:#235;text-decoration:none;padding:.15em 0} nav#toc a.sub{padding-left:1em}
main{margin-left:190px;padding:.5em 1.5em;max-width:1250px}
h1{font-size:1.4em;margin:.4em 0} h2{border-bottom:1px solid #ddd;padding-bottom:.2em}
.glance td:nth-child(-n+3){white-space:nowrap} .side{display:flex;gap:1.2em;align-items:flex-start;flex-wrap:wrap}
.side>div{flex:3 1 600px;min-width:0;overflow-x:auto} .side figure{flex:2 1 340px;margin:0;max-width:480px;min-width:0}
tr.degenerate td{color:#999;background:#f4f4f4}
.flag{color:#a33;font-size:.8em;font-style:italic} td .flag{display:inline-block;min-width:14em}
details{margin:.5em 0} summary{cursor:pointer;font-weight:600}
""" + """
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:.3em 0;font-size:.8em}
img{max-width:100%} .note{color:#8a5a00} .filters label{margin-right:1em;white-space:nowrap}
tr.item{cursor:pointer} tr.item:hover{background:#f5f5ff} tr.correct td:last-child{color:#282}
tr.wrong td:last-child{color:#b22} tr.unparsed td:last-child,tr.failed td:last-child{color:#b70}
@media print{nav#toc,#items{display:none} main{margin:0;max-width:none;padding:0}
 details>*{display:block} details:not([open])>summary~*{display:block}
 section,figure,table{break-inside:avoid} h2{break-before:auto;break-after:avoid} img{max-width:90%}
 details::details-content{content-visibility:visible;display:block}
 body{font-size:10pt} .side{display:block}}
"""


def markdown_to_html(text: str, flagged: Sequence[Degenerate] = ()) -> str:
    """Render the markdown the tables and analyses produce (:mod:`.markdown`), all text escaped.

    Args:
        text: The markdown.
        flagged: Degenerate conditions; a table row showing one is greyed, with the reason.
    """
    return "\n".join(_block_html(b, flagged) for b in markdown.blocks(text))


def _block_html(block: markdown.Block, flagged: Sequence[Degenerate] = ()) -> str:
    if isinstance(block, markdown.Heading):
        level = min(block.level + 1, 6)
        return f"<h{level}>{escape(block.text)}</h{level}>"
    if isinstance(block, markdown.Table):
        head = "".join(f"<th>{escape(c)}</th>" for c in block.header)
        rows = "".join(_row_html(r, _flag_of(r, block.rows, flagged)) for r in block.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    if isinstance(block, markdown.Bullets):
        return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in block.items) + "</ul>"
    return f"<p>{escape(block.text)}</p>"


def _row_html(cells: Sequence[str], flag: Degenerate | None) -> str:
    if flag is None:
        return "<tr>" + "".join(f'<td>{escape(c)}</td>' for c in cells) + "</tr>"
    note = f'<br><span class="flag">not interpretable: {escape(flag.reason)}</span>'
    tds = [f'<td>{escape(c)}{note if k == 0 else ""}</td>' for k, c in enumerate(cells)]
    return f'<tr class="degenerate" title="not interpretable: {escape(flag.reason)}">' + "".join(tds) + "</tr>"


def _shows(cell: str, value: str) -> bool:
    return cell == value or cell.startswith(value + " ")


def _flag_of(cells: Sequence[str], table: Sequence[Sequence[str]], flagged: Sequence[Degenerate]) -> Degenerate | None:
    """The degenerate condition a table row shows, if any.

    Tables are the suites' own markdown, so a row is matched by its cells: the model's name, and
    the condition's name where the row has one; otherwise each axis value of the condition that
    varies across the suite's flagged and unflagged conditions and that the table shows at all.
    A row that combines conditions (CxNLI's Exp 1 beside Exp 2) is flagged when one of them is.
    """
    shown = {c for row in table for c in row}
    for d in flagged:
        if d.model not in cells:
            continue
        conditions = {x.condition for x in flagged if x.suite == d.suite}
        if d.condition in cells:
            return d
        if any(c in conditions or "/" in c for c in cells):
            continue  # the row names another condition
        wanted = [v for v in d.axes.values() if any(_shows(c, v) for c in shown)]
        if all(any(_shows(c, v) for c in cells) for v in wanted):
            return d
    return None


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td>{escape(str(c))}</td>' for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _counts(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        for row in run.rows:
            m = row.metrics
            rate = m.get(UNPARSED_RATE)
            rows.append([str(run.path), run.model, row.condition, m.get(N, ""), m.get(N_UNPARSED, ""),
                         f"{rate:.1%}" if isinstance(rate, float) else "", m.get(N_ERRORS, "")])
    return _table(["Run", "Model", "Condition", "n", "Unparsed", "Unparsed rate", "Errors"], rows)


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
    return _table(["Model", "Condition", "Metric", "Value", "95% interval", "Method"], rows) if rows else ""


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _drawn(name: str, rows: Sequence[Any]) -> list[Figure] | str:
    """The suite's figures, or a note saying why there are none."""
    draw = SUITES.get(name).figures
    if draw is None:
        return ""
    if not figs.available():
        return _note(f"{name}: figures need matplotlib: pip install 'lingdiag[plots]'")
    try:
        return draw(rows)
    except LingdiagError as e:
        return _note(f"{name}: no figures: {e}")


def _figure(f: Figure, flags: Sequence[Degenerate]) -> str:
    data = base64.b64encode(f.png).decode("ascii")
    marked = "".join(f'<br><span class="flag">Not interpretable here: {escape(d.model)}, {escape(d.condition)} '
                     f"({escape(d.reason)}).</span>" for d in flags)
    return (f"<figure><img alt=\"{escape(f.title)}\" src=\"data:image/png;base64,{data}\">"
            f"<figcaption><b>{escape(f.title)}.</b> {escape(f.caption)}{marked}</figcaption></figure>")


def _analyses(name: str, rows: Sequence[Any], flags: Sequence[Degenerate]) -> str:
    analyse = SUITES.get(name).analyses
    if analyse is None:
        return ""
    try:
        return markdown_to_html(analyse(rows), flags)
    except LingdiagError as e:
        return _note(f"{name}: analyses unavailable: {e}")


def _anchor(name: str) -> str:
    return "suite-" + "".join(ch if ch.isalnum() else "-" for ch in name)


class _Suite:
    """One suite's parts of the page: its tables split into the headline and the rest, its figures."""

    def __init__(self, name: str, text: str, rows: Sequence[Any], flagged: Sequence[Degenerate],
                 scaling: Figure | None = None) -> None:
        self.name = name
        self.scaling = scaling
        """The headline metric against model size (:mod:`.scaling`), where the runs have two sizes."""
        self.budget = budget_figure(name, SUITES.get(name).headline, rows) if figs.available() else None
        """The headline metric against the thinking budget (:mod:`.budget`), where the rows sweep one."""
        self.flags = [d for d in flagged if d.suite == name]
        blocks = list(markdown.blocks(text))
        first = next((k for k, b in enumerate(blocks) if isinstance(b, markdown.Table)), len(blocks) - 1)
        self.headline = blocks[:first + 1]
        """Everything up to the first table: the paper's headline table with its heading and notes."""
        self.rest = blocks[first + 1:]
        drawn = _drawn(name, rows)
        self.note = drawn if isinstance(drawn, str) else ""
        self.figures = drawn if isinstance(drawn, list) else []
        self.analyses = _analyses(name, rows, self.flags)

    def more(self) -> list[Figure]:
        """The figures of the suite's own section: all but the summary's, then the scaling and budget figures."""
        return [*self.figures[1:], *(f for f in (self.scaling, self.budget) if f)]

    def html(self, blocks: Sequence[markdown.Block]) -> str:
        return "\n".join(_block_html(b, self.flags) for b in blocks)


def _glance(runs: Sequence[LoadedRun], flagged: Sequence[Degenerate]) -> str:
    """Each suite's headline metric per model and condition, in one small table."""
    rows = []
    for suite, models in headline(runs, flagged).items():
        key = SUITES.get(suite).headline or "headline table below"
        for model, cells in models.items():
            shown = " · ".join(f"{c} {v}" for c, v in cells)
            rows.append(f'<tr><td><a href="#{_anchor(suite)}">{escape(suite)}</a></td><td>{escape(key)}</td>'
                        f"<td>{escape(model)}</td><td>{escape(shown)}</td></tr>")
    return ('<table class="glance"><thead><tr><th>Suite</th><th>Headline metric</th><th>Model</th>'
            "<th>By condition</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _summary(runs: Sequence[LoadedRun], suites: Sequence[_Suite], flagged: Sequence[Degenerate]) -> str:
    parts = ['<section id="summary"><h2>Summary</h2>', _glance(runs, flagged)]
    try:
        found = differences(runs, flagged)
    except LingdiagError as e:
        parts.append(_note(f"differences not tested: {e}"))
        found = []
    parts.append("<h3 id=\"differences\">Statistically supported differences</h3>")
    parts.append("<ul>" + "".join(f"<li>{escape(f.sentence)}</li>" for f in found) + "</ul>" if found else
                 "<p>None at p &lt; 0.05 (paired tests over models per condition, Holm-adjusted; "
                 "competence against performance where a run holds both).</p>")
    parts.append('<h3 id="not-interpretable">Not interpretable</h3>')
    parts.append("<ul>" + "".join(f"<li>{escape(d.suite)}: {escape(d.model)}, {escape(d.condition)}: "
                                  f"{escape(d.reason)}</li>" for d in flagged) + "</ul>" if flagged else
                 "<p>Every condition is interpretable (under 50% unparsed or failed, more than one label).</p>")
    excluded = [(run, e) for run in runs for e in run.meta.excluded or ()]
    if excluded:  # items of the data itself that no model could be scored on
        parts.append(f"<p>Items of the data excluded, never scored ({len(excluded)}):</p><ul>"
                     + "".join(f'<li dir="auto">{escape(run.suite)} ({escape(str(run.path))}): '
                               f"{escape(e.item_id)}: {escape(e.reason)}</li>" for run, e in excluded) + "</ul>")
    for s in suites:
        figure = _figure(s.figures[0], s.flags) if s.figures else s.note
        parts.append(f'<div class="side" data-suite="{escape(s.name)}"><div>{s.html(s.headline)}</div>'
                     f"{figure}</div>")
    return "\n".join(parts) + "</section>"


def _provenance(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        meta = run.meta
        rows.append([str(run.path), run.suite, run.model, meta.identity.backend, meta.identity.weights_sha256,
                     ", ".join(f"{k} {v}" for k, v in (meta.checksums or {}).items()),
                     ", ".join(f"{k} {v}" for k, v in (meta.versions or {}).items()),
                     "" if meta.seed is None else meta.seed])
    table = _table(["Run", "Suite", "Model", "Backend", "Weights SHA-256", "Dataset", "Versions", "Seed"], rows)
    configs = "".join(f"<h4>{escape(str(run.path))}</h4><pre>{escape(_json(run.meta.config))}</pre>"
                      for run in runs)
    return table + configs


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str)


def _scaling(name: str, runs: Sequence[LoadedRun], families: Mapping[str, str]) -> Figure | None:
    if not figs.available():
        return None
    return scaling_figure(name, runs, families)


def render_html(text: str, runs: Sequence[LoadedRun], families: Mapping[str, str] | None = None) -> str:
    """The report page.

    Args:
        text: The markdown tables (``report.tables.combined``): ``suite_tables`` joined, which the
            page lays out suite by suite.
        runs: The runs, in the order given.
        families: Model → family for the scaling figure (others: from the model's config).

    Returns:
        A complete HTML document.
    """
    by_suite = rows_by_suite(runs)
    sections = suite_tables(runs)
    flagged = degenerate(runs)
    # Tables a caller built otherwise than ``tables(runs)`` are shown as given, before the suites.
    given = [] if "\n".join(sections.values()) == text else [
        f'<section id="tables"><h2>Tables</h2>{markdown_to_html(text, flagged)}</section>']
    suites = [_Suite(name, sections[name], by_suite[name], flagged, _scaling(name, runs, families or {}))
              for name in by_suite]
    nav = ['<a href="#summary">Summary</a>', '<a class="sub" href="#differences">Differences</a>',
           '<a class="sub" href="#not-interpretable">Not interpretable</a>',
           *(['<a href="#tables">Tables</a>'] if given else []),
           *(f'<a href="#{_anchor(s.name)}">{escape(s.name)}</a>' for s in suites),
           '<a href="#items">Items</a>', '<a href="#details">Counts, intervals, provenance</a>']
    body = [f'<section id="{_anchor(s.name)}"><h2>{escape(s.name)}</h2>{s.html(s.rest)}'
            f'<div class="figures" data-suite="{escape(s.name)}">{"".join(_figure(f, s.flags) for f in s.more())}'
            f"</div>{s.analyses}</section>" for s in suites]
    # Only the browser's own script may run; images only from data: URIs; nothing from the network.
    csp = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {browser.script_hash()}"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        "<title>lingdiag report</title>", f"<style>{_STYLE}</style></head><body>",
        '<nav id="toc" aria-label="Sections">' + "".join(nav) + "</nav><main>",
        f"<h1>lingdiag report: {len(runs)} run{'s' * (len(runs) != 1)}</h1>",
        _summary(runs, suites, flagged), *given, *body,
        '<section id="items"><h2>Items</h2>', browser.section(runs), "</section>",
        '<section id="details"><h2>Counts, intervals and provenance</h2>',
        "<details><summary>Counts</summary>", _counts(runs), "</details>",
        "<details><summary>Intervals</summary>", _intervals(runs), "</details>",
        "<details><summary>Provenance (config, versions, checksums)</summary>", _provenance(runs), "</details>",
        "</section></main></body></html>",
    ]) + "\n"


def write_html(path: Path, text: str, runs: Sequence[LoadedRun], families: Mapping[str, str] | None = None) -> None:
    """Write the report for ``runs`` to ``path`` (called by ``report.tables.combined``).

    Args:
        path: The HTML file to write.
        text: The markdown tables.
        runs: The runs, in the order given.
        families: Model → family for the scaling figure.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"--html {path}: a directory; give a file name such as {path / 'report.html'}")
    make_dir(path.parent)
    write_atomic(path, render_html(text, runs, families))
