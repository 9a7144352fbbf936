r"""Tables for papers: each suite's tables as Markdown and LaTeX files (``lingdiag report --tables DIR``).

The LaTeX is what a paper's source can ``\input``: one ``booktabs`` tabular per table, headings
as ``\paragraph``, notes as plain paragraphs, every cell escaped (model names and conditions
come from runs and may hold ``_``, ``%``, ``&``...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.reading import LoadedRun
from lingdiag.report import markdown
from lingdiag.report.tables import suite_tables

_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIALS))


def latex_escape(text: str) -> str:
    """Text with LaTeX's special characters made literal."""
    return _SPECIAL.sub(lambda m: _LATEX_SPECIALS[m.group(0)], text)


def markdown_to_latex(text: str) -> str:
    """The markdown the suites' tables produce (:mod:`.markdown`) as LaTeX."""
    out: list[str] = []
    for block in markdown.blocks(text):
        if isinstance(block, markdown.Table):
            out += [r"\begin{tabular}{" + "l" * len(block.header) + "}", r"\toprule",
                    " & ".join(latex_escape(c) for c in block.header) + r" \\", r"\midrule",
                    *(" & ".join(latex_escape(c) for c in r) + r" \\" for r in block.rows), r"\bottomrule",
                    r"\end{tabular}"]
        elif isinstance(block, markdown.Heading):
            out.append(r"\paragraph{" + latex_escape(block.text) + "}")
        elif isinstance(block, markdown.Bullets):
            out += [r"\textbullet{} " + latex_escape(i) + r"\\" for i in block.items]
        elif isinstance(block, markdown.Quote):
            out += [r"\begin{quote}", r"\\ ".join(latex_escape(i) for i in block.lines), r"\end{quote}"]
        else:
            out.append(latex_escape(block.text))
        out.append("")
    return "\n".join(out).strip() + "\n"


def write_tables(directory: Path, runs: Sequence[LoadedRun]) -> list[Path]:
    """``<suite>.md`` and ``<suite>.tex`` for every suite among ``runs``; the paths written."""
    directory = Path(directory)
    make_dir(directory)
    written = []
    for name, text in suite_tables(runs).items():
        for path, content in ((directory / f"{name}.md", text), (directory / f"{name}.tex", markdown_to_latex(text))):
            write_atomic(path, content)
            written.append(path)
    return written
