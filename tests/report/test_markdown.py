"""The suites' small Markdown read into blocks: a quoted note (``> scoring policy …``) is a block of its
own, drawn as a note in HTML and a quote in LaTeX, never a raw ``>`` before its line."""

from __future__ import annotations

from lingdiag.report import markdown
from lingdiag.report.export import markdown_to_latex
from lingdiag.report.markup import markdown_to_html

TEXT = "> scoring policy `lingdiag`: BOS\n> second <policy>\n\n| A | B |\n|---|---|\n| 1 | 2 |\n"


def test_a_quoted_note_is_its_own_block() -> None:
    blocks = list(markdown.blocks(TEXT))
    assert blocks[0] == markdown.Quote(["scoring policy `lingdiag`: BOS", "second <policy>"])
    assert isinstance(blocks[1], markdown.Table)


def test_a_quoted_note_is_a_note_in_html_and_a_quote_in_latex() -> None:
    html = markdown_to_html(TEXT)
    assert html.startswith('<blockquote class="note">') and "&gt; scoring" not in html and "> scoring" not in html
    assert "&lt;policy&gt;" in html
    latex = markdown_to_latex(TEXT)
    assert "\\begin{quote}" in latex and "> " not in latex
