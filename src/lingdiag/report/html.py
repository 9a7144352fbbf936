"""A self-contained HTML report that opens with its findings, and the page shell every lingdiag page is
drawn in (the static report and ``lingdiag view`` alike).

Layout: a navigation sidebar and the registered sections in their order (:mod:`.sections`): a summary
(each suite's headline metric per model, its headline table at full width and its main figure below, the statistically
supported differences, the conditions that are not interpretable); one section per suite with its other
tables, figures and analyses; the item browser; counts, intervals and provenance collapsed at the end.
Degenerate conditions (:mod:`.findings`) are greyed with their reason in every table row and figure
caption that shows them.

One file with no external resources; figures are base64 PNG data URIs, and the only scripts are the
ones a section carries (the item browser's, :mod:`.browser`), each allowed by hash in the page's
Content-Security-Policy. Everything that comes from a run (model output, prompts, dataset text, model
names) is untrusted: it passes through ``html.escape`` (:mod:`.markup`), or reaches the page as JSON
shown with ``textContent``; only lingdiag's own markup is raw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.reading import LoadedRun
from lingdiag.report.page import Page
from lingdiag.report.sections import Fragment, fragments

# td,li,pre: each takes the direction of its first strong letter (as dir="auto" does), so Hebrew or
# Arabic text reads right to left inside the left-to-right page.
_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
td,li,pre{unicode-bidi:plaintext} bdi{overflow-wrap:anywhere}
nav#toc{position:fixed;top:0;left:0;bottom:0;width:190px;overflow-y:auto;background:#f6f6f8;
 border-right:1px solid #ddd;padding:.8em;font-size:.85em;box-sizing:border-box}
nav#toc a{display:block;color:#235;text-decoration:none;padding:.15em 0} nav#toc a.sub{padding-left:1em}
main{margin-left:190px;padding:.5em 1.5em;max-width:1250px}
h1{font-size:1.4em;margin:.4em 0} h2{border-bottom:1px solid #ddd;padding-bottom:.2em}
.glance td:nth-child(-n+3){white-space:nowrap} .side{display:flex;gap:1.2em;align-items:flex-start;flex-wrap:wrap}
.side>div{flex:1 1 100%;min-width:0;overflow-x:auto} .side figure{flex:0 1 640px;margin:0;min-width:0}
tr.degenerate td{color:#999;background:#f4f4f4}
.flag{color:#a33;font-size:.8em;font-style:italic} td .flag{display:inline-block;min-width:14em}
.key{white-space:nowrap;margin-right:.8em} .swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
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


def csp(scripts: Sequence[str] = ()) -> str:
    """The pages' Content-Security-Policy: only the given scripts (by hash) may run; images only from
    data: URIs; nothing from the network.
    """
    allowed = " ".join(scripts) or "'none'"
    return f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {allowed}"


def shell(title: str, heading: str, parts: Sequence[Fragment], refresh: int | None = None) -> str:
    """A complete page: the parts' navigation in the sidebar, their HTML in order, their scripts allowed.

    Args:
        title: The window title (lingdiag's own text or escaped by the caller).
        heading: The page's ``h1`` (HTML, escaped by the caller).
        parts: The fragments, in page order.
        refresh: Reload the page after this many seconds (a live view without a script).
    """
    sub = ' class="sub"'
    nav = "".join(f'<a{sub if link.sub else ""} href="#{escape(link.anchor)}">{escape(link.text)}</a>'
                  for part in parts for link in part.nav)
    scripts = tuple(dict.fromkeys(s for part in parts for s in part.scripts))
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp(scripts)}">',
        *([f'<meta http-equiv="refresh" content="{int(refresh)}">'] if refresh else []),
        f"<title>{title}</title>", f"<style>{_STYLE}</style></head><body>",
        f'<nav id="toc" aria-label="Sections">{nav}</nav><main>',
        f"<h1>{heading}</h1>",
        *(part.html for part in parts),
    ]) + "</main></body></html>\n"


def render_html(text: str, runs: Sequence[LoadedRun], families: Mapping[str, str] | None = None,
                leading: Sequence[Fragment] = (), title: str | None = None) -> str:
    """The report page.

    Args:
        text: The markdown tables (``report.tables.combined``): ``suite_tables`` joined, which the
            page lays out suite by suite.
        runs: The runs, in the order given.
        families: Model → family for the scaling figure (others: from the model's config).
        leading: Fragments before the registered sections, in order (``lingdiag.study.report``).
        title: The page's heading (default: the number of runs).

    Returns:
        A complete HTML document.
    """
    page = Page(runs, text, families or {})
    heading = title or f"lingdiag report: {len(runs)} run{'s' * (len(runs) != 1)}"
    return shell("lingdiag report", escape(heading), [*leading, *fragments(page)])


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
