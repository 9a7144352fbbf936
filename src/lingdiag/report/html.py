"""A self-contained HTML report: tables, inline PNG figures, counts and sample records.

One file with no scripts and no external resources; figures are base64 PNG data URIs.
Everything that comes from a run (model output, prompts, dataset text, model names) is
untrusted and passes through ``html.escape``; only this module's own markup is raw.

Figures and analyses come from each suite's ``Suite.figures`` and ``Suite.analyses``; this
module knows no suite.
"""

from __future__ import annotations

import base64
import json
import os
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from lingdiag import figures as figs
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.records import UNPARSED, ItemRecord
from lingdiag.report.tables import rows_by_suite
from lingdiag.store import LoadedRun, RunStore
from lingdiag.suite import SUITES

SAMPLES_PER_KIND = 2
"""Records shown per condition for each of: correct, wrong, unparsed."""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:.3em 0;font-size:.8em}
img{max-width:100%} .note{color:#8a5a00} details{margin:.4em 0;border-left:3px solid #ddd;padding-left:.6em}
.correct{border-color:#3a3} .wrong{border-color:#c33} .unparsed{border-color:#c90}
"""


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_to_html(text: str) -> str:
    """Render the markdown the tables and analyses produce.

    Headings, pipe tables, bullet lists and paragraphs; all text is escaped and no inline
    markup is interpreted.
    """
    out: list[str] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k].rstrip()
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 1, 6)
            out.append(f"<h{level}>{escape(line.lstrip('#').strip())}</h{level}>")
            k += 1
        elif line.startswith("|"):
            block = []
            while k < len(lines) and lines[k].startswith("|"):
                block.append(lines[k])
                k += 1
            body = [b for b in block[1:] if not set(b.replace("|", "").strip()) <= set("-: ")]
            head = "".join(f"<th>{escape(c)}</th>" for c in _cells(block[0]))
            rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in _cells(b)) + "</tr>" for b in body)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif line.startswith("- "):
            items = []
            while k < len(lines) and lines[k].startswith("- "):
                items.append(f"<li>{escape(lines[k][2:])}</li>")
                k += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        elif line.strip():
            out.append(f"<p>{escape(line)}</p>")
            k += 1
        else:
            k += 1
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
        for f in drawn:
            data = base64.b64encode(f.png).decode("ascii")
            parts.append(f"<figure><img alt=\"{escape(f.title)}\" src=\"data:image/png;base64,{data}\">"
                         f"<figcaption><b>{escape(f.title)}.</b> {escape(f.caption)}</figcaption></figure>")
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


def _show(value: Any) -> str:
    """A prompt or output as plain text: chat turns as ``role: content``, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return "\n\n".join(f"[{m['role']}]\n{m.get('content', '')}" for m in value)
    return json.dumps(value, indent=2, ensure_ascii=False)


def _record(r: ItemRecord, kind: str) -> str:
    tags = ", ".join(f"{k}={v}" for k, v in sorted(r.tags.items()))
    summary = f"{kind}: {r.item_id} ({tags}) gold {r.gold}, predicted {r.label}"
    prompts = "".join(f"<pre>{escape(_show(p))}</pre>" for p in r.prompts)
    outputs = "".join(f"<pre>{escape(_show(o))}</pre>" for o in r.outputs)
    error = f"<p>error: {escape(r.error)}</p>" if r.error else ""
    return (f'<details class="{kind}"><summary>{escape(summary)}</summary>'
            f"<p>Prompt</p>{prompts}<p>Raw output</p>{outputs}{error}</details>")


def _evenly(records: Sequence[ItemRecord], k: int) -> list[ItemRecord]:
    """``k`` records spread over ``records`` (all of them when there are fewer)."""
    if len(records) <= k:
        return list(records)
    return [records[int(j * len(records) / k)] for j in range(k)]


def _kind(r: ItemRecord) -> str:
    if r.label == UNPARSED or r.error is not None:
        return "unparsed"
    return "correct" if r.correct else "wrong"


def _samples(run_dir: Path, k: int) -> str:
    by_condition: dict[str, dict[str, list[ItemRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in RunStore(run_dir).load_records():
        if r.correct is None and r.label != UNPARSED:
            continue  # no gold label: neither correct nor wrong
        by_condition[r.condition][_kind(r)].append(r)
    parts = []
    for condition, kinds in by_condition.items():
        # Spread over the file so that the samples come from different groups/phenomena.
        shown = [_record(r, kind) for kind in ("correct", "wrong", "unparsed") for r in _evenly(kinds.get(kind, []), k)]
        parts.append(f"<h4>{escape(condition)}</h4>" + "".join(shown))
    return "\n".join(parts)


def render_html(text: str, runs: Sequence[LoadedRun], samples: int = SAMPLES_PER_KIND) -> str:
    """The report page.

    Args:
        text: The markdown tables (``report.tables.combined``).
        runs: The runs, in the order given.
        samples: Records shown per condition for each of correct, wrong, unparsed.

    Returns:
        A complete HTML document.
    """
    sample_parts = [f"<h3>{escape(str(r.path))} ({escape(r.model)})</h3>{_samples(r.path, samples)}" for r in runs]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>lingdiag report</title>", f"<style>{_STYLE}</style></head><body>",
        f"<h1>lingdiag report: {len(runs)} run{'s' * (len(runs) != 1)}</h1>",
        "<h2>Counts</h2>", _counts(runs),
        "<h2>Tables</h2>", markdown_to_html(text),
        "<h2>Figures</h2>", _figures(runs),
        "<h2>Analyses</h2>", _analyses(runs),
        "<h2>Sample records</h2>", *sample_parts,
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")  # a killed write never leaves a torn report
    tmp.write_text(render_html(text, runs), encoding="utf-8")
    os.replace(tmp, path)
