"""The report's markup from its parts: the suites' markdown as HTML, tables, notes and figures.

Everything that comes from a run (model output, prompts, dataset text, model names) is untrusted:
it passes through ``html.escape`` here; only this module's own markup is raw. The static report and
``lingdiag view`` draw every page through these functions and :func:`lingdiag.report.html.shell`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from html import escape
from pathlib import PurePath
from typing import Any

from lingdiag.figures import Figure
from lingdiag.report import markdown
from lingdiag.report.findings import Degenerate

_STRONG = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """``text`` escaped, with the Markdown emphasis the tables' notes use rendered (``**bold**``,
    ```code```) rather than shown as literal marks; the marks are matched after escaping, so no
    markup from the text itself survives.
    """
    return _CODE.sub(r"<code>\1</code>", _STRONG.sub(r"<strong>\1</strong>", escape(text)))


def markdown_to_html(text: str, flagged: Sequence[Degenerate] = ()) -> str:
    """Render the markdown the tables and analyses produce (:mod:`.markdown`), all text escaped.

    Args:
        text: The markdown.
        flagged: Degenerate conditions; a table row showing one is greyed, with the reason.
    """
    return "\n".join(block_html(b, flagged) for b in markdown.blocks(text))


def block_html(block: markdown.Block, flagged: Sequence[Degenerate] = ()) -> str:
    """One block of the suites' markdown as HTML, all text escaped."""
    if isinstance(block, markdown.Heading):
        level = min(block.level + 1, 6)
        return f"<h{level}>{_inline(block.text)}</h{level}>"
    if isinstance(block, markdown.Table):
        head = "".join(f"<th>{_inline(c)}</th>" for c in block.header)
        rows = "".join(_row_html(r, _flag_of(r, block.rows, flagged)) for r in block.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    if isinstance(block, markdown.Bullets):
        return "<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in block.items) + "</ul>"
    if isinstance(block, markdown.Quote):
        return '<blockquote class="note">' + "<br>".join(_inline(i) for i in block.lines) + "</blockquote>"
    return f"<p>{_inline(block.text)}</p>"


def _row_html(cells: Sequence[str], flag: Degenerate | None) -> str:
    if flag is None:
        return "<tr>" + "".join(f'<td>{_inline(c)}</td>' for c in cells) + "</tr>"
    note = f'<br><span class="flag">not interpretable: {escape(flag.reason)}</span>'
    tds = [f'<td>{_inline(c)}{note if k == 0 else ""}</td>' for k, c in enumerate(cells)]
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


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain table, every cell escaped."""
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td>{escape(str(c))}</td>' for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def shown_path(text: str) -> str:
    """``text`` with an absolute path of the machine a run ran on cut to its last two parts
    (``…/data/pairs.jsonl``): a report travels, the user's directories stay home.
    """
    path = PurePath(text)
    if not path.is_absolute() or len(path.parts) <= 3:
        return text
    return "…/" + "/".join(path.parts[-2:])


def note(text: str) -> str:
    """A highlighted one-line note."""
    return f'<p class="note">{escape(text)}</p>'


def figure_html(f: Figure, flags: Sequence[Degenerate]) -> str:
    """A figure as a data-URI PNG with its caption, the colour key of the models it draws as series
    (one colour per model across the page) and the not-interpretable conditions it shows.
    """
    data = base64.b64encode(f.png).decode("ascii")
    key = "".join(f'<span class="key" data-model="{escape(model)}"><span class="swatch" style="background:'
                  f'{escape(colour)}"></span>{escape(model)}</span>' for model, colour in f.legend)
    marked = "".join(f'<br><span class="flag">Not interpretable here: {escape(d.model)}, {escape(d.condition)} '
                     f"({escape(d.reason)}).</span>" for d in flags)
    return (f"<figure><img alt=\"{escape(f.title)}\" src=\"data:image/png;base64,{data}\">"
            f"<figcaption><b>{escape(f.title)}.</b> {escape(f.caption)}{'<br>' + key if key else ''}{marked}"
            "</figcaption></figure>")


def anchor(name: str) -> str:
    """The id of a suite's section."""
    return "suite-" + "".join(ch if ch.isalnum() else "-" for ch in name)
