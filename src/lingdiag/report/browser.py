"""The report's item browser: every record of every run, filterable in the page.

The records travel as one JSON data block (strings interned once, so a few-shot prefix or a
model name shared by thousands of records is stored once) and a small inline script builds
the visible rows with ``textContent`` only: model output, prompts and dataset text are never
parsed as HTML. The page's Content-Security-Policy allows exactly this script (by its
SHA-256), so markup that slipped into a record could not run even if it reached the DOM.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from lingdiag.reading import LoadedRun
from lingdiag.records import (
    JUDGE,
    JUDGED,
    REQUEST_SEPARATOR,
    UNFINISHED,
    UNPARSED,
    ItemRecord,
    TextOutput,
    record_text,
    unparsed_reason,
)
from lingdiag.records import thinking_text as output_thinking

COLUMNS = ("suite", "model", "run", "condition", "item", "tags", "outcome", "gold", "label", "prompt", "output",
           "error", "thinking")
"""The fields of one browser row, in the order the data block stores them."""

PAGE_SIZE = 200
"""Rows drawn at once; "show more" draws the next page (a full grid holds tens of thousands)."""

OUTCOMES = ("correct", "wrong", "unparsed", "unfinished", "failed", "no gold")


def outcome(r: ItemRecord) -> str:
    """How a record counts: a failed request, an unparsed answer, thinking that never closed, right,
    wrong, or no gold label.
    """
    if r.error is not None:
        return "failed"
    if r.label in (UNPARSED, UNFINISHED):
        return r.label
    if r.correct is None:
        return "no gold"
    return "correct" if r.correct else "wrong"


def label_text(r: ItemRecord) -> str:
    """The record's label as the browser and the viewer show it: a judge model's marked
    (``True (judged by SPEC)``), an unparsed answer with its reason (``unparsed: hedged``).
    """
    if r.detail.get(JUDGED):
        judge = r.detail.get(JUDGE)
        model = judge.get("model") if isinstance(judge, Mapping) else None
        return f"{r.label} (judged" + (f" by {model})" if model else ")")
    reason = unparsed_reason(r)
    return f"{r.label}: {reason}" if reason else r.label


class _Strings:
    """Interned strings: each distinct text is stored once and rows hold indices."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.values)
            self.values.append(text)
        return self._index[text]


def _tags(r: ItemRecord, names: Sequence[str]) -> str:
    """The record's analysis tags (the suite's ``stat_tags``) as ``name=value`` lines."""
    return "\n".join(f"{k}={r.tags[k]}" for k in names if k in r.tags and isinstance(r.tags[k], str | int | float))


def thinking_text(r: ItemRecord) -> str:
    """The record's thinking (every generation's, in order), or empty where it thought none."""
    return REQUEST_SEPARATOR.join(output_thinking(o) for o in r.outputs if isinstance(o, TextOutput) and o.thought)


def _answers(r: ItemRecord) -> list[Any]:
    """The record's outputs without their thinking (the browser shows it apart, above them)."""
    return [replace(o, reasoning=None, reasoning_tokens=None, unfinished=None) if isinstance(o, TextOutput) else o
            for o in r.outputs]


def records_data(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """The data block: ``{"columns", "strings", "rows"}``, each row a list of string indices."""
    strings = _Strings()
    rows = []
    for run in runs:
        tag_names = run.suite.stat_tags
        for r in run.records:
            values = (run.suite_title, run.model, run.name, r.condition, r.item_id, _tags(r, tag_names), outcome(r),
                      r.gold or "", label_text(r), record_text(r.prompts), record_text(_answers(r)), r.error or "",
                      thinking_text(r))
            rows.append([strings(v) for v in values])
    return {"columns": list(COLUMNS), "strings": strings.values, "rows": rows}


def _json_block(data: Any) -> str:
    """JSON that cannot close its ``<script>`` element or open another (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


SCRIPT = """
"use strict";
const data = JSON.parse(document.getElementById("records").textContent);
const S = data.strings;
const rows = data.rows.map(r => Object.fromEntries(data.columns.map((c, i) => [c, S[r[i]]])));
const $ = id => document.getElementById(id);
const filters = {suite: $("f-suite"), model: $("f-model"), condition: $("f-condition"), tag: $("f-tag"),
                 outcome: $("f-outcome")};
function options(select, values) {
  for (const v of [...new Set(values)].sort()) {
    const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o);
  }
}
options(filters.suite, rows.map(r => r.suite));
options(filters.model, rows.map(r => r.model));
options(filters.condition, rows.map(r => r.condition));
options(filters.tag, rows.flatMap(r => r.tags ? r.tags.split("\\n") : []));
options(filters.outcome, rows.map(r => r.outcome));
let shown = 0, matching = [];
function matches(r, q) {
  for (const k of ["suite", "model", "condition", "outcome"]) {
    if (filters[k].value && r[k] !== filters[k].value) return false;
  }
  if (filters.tag.value && !r.tags.split("\\n").includes(filters.tag.value)) return false;
  return !q || [r.item, r.label, r.gold, r.prompt, r.output, r.error, r.thinking]
    .some(t => t.toLowerCase().includes(q));
}
function cell(tr, text) {
  const td = document.createElement("td"); td.dir = "auto"; td.textContent = text; tr.appendChild(td);
}
function line(parent, text) {
  const p = document.createElement("p"); p.dir = "auto"; p.textContent = text; parent.appendChild(p);
}
function block(parent, title, text) {
  line(parent, title);
  const pre = document.createElement("pre"); pre.dir = "auto"; pre.textContent = text; parent.appendChild(pre);
}
function draw(n) {
  const body = $("items-body");
  for (const r of matching.slice(shown, shown + n)) {
    const tr = document.createElement("tr"); tr.className = "item " + r.outcome.replace(" ", "-");
    for (const k of ["model", "condition", "item", "tags", "gold", "label", "outcome"]) cell(tr, r[k]);
    const more = document.createElement("tr"); more.className = "more"; more.hidden = true;
    const td = document.createElement("td"); td.colSpan = 7; more.appendChild(td);
    tr.addEventListener("click", () => {
      if (!td.firstChild) {
        line(td, "Run: " + r.run + " (" + r.suite + ")");
        block(td, "Prompt", r.prompt);
        if (r.thinking) {
          const d = document.createElement("details"); d.className = "thinking";
          const s = document.createElement("summary"); s.textContent = "Thinking"; d.appendChild(s);
          const pre = document.createElement("pre"); pre.textContent = r.thinking; d.appendChild(pre);
          td.appendChild(d);
        }
        block(td, "Raw output", r.output);
        if (r.error) block(td, "Error", r.error);
      }
      more.hidden = !more.hidden;
    });
    body.appendChild(tr); body.appendChild(more);
  }
  shown = Math.min(matching.length, shown + n);
  $("items-count").textContent = matching.length + " of " + rows.length + " records match; " + shown + " shown";
  $("items-more").hidden = shown >= matching.length;
}
function update() {
  const q = $("f-text").value.trim().toLowerCase();
  matching = rows.filter(r => matches(r, q));
  $("items-body").replaceChildren();
  shown = 0;
  draw(PAGE);
}
for (const f of Object.values(filters)) f.addEventListener("change", update);
$("f-text").addEventListener("input", update);
$("items-more").addEventListener("click", () => draw(PAGE));
update();
"""


def script() -> str:
    """The browser's script with its page size."""
    return f"const PAGE = {PAGE_SIZE};" + SCRIPT


def script_hash() -> str:
    """The CSP source that allows :func:`script` and nothing else."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script().encode("utf-8")).digest()).decode("ascii") + "'"


def _select(name: str, label: str) -> str:
    return f'<label>{label} <select id="f-{name}"><option value="">all</option></select></label>'


def section(runs: Sequence[LoadedRun]) -> str:
    """The browser: filters, the record table, the data block and the script."""
    controls = " ".join([_select("suite", "Suite"), _select("model", "Model"), _select("condition", "Condition"),
                         _select("tag", "Group/class"), _select("outcome", "Outcome"),
                         '<label>Search <input id="f-text" type="search" '
                         'placeholder="text in prompt, thinking or output"></label>'])
    head = "".join(f"<th>{h}</th>" for h in ("Model", "Condition", "Item", "Tags", "Gold", "Predicted", "Outcome"))
    return "\n".join([
        f'<div class="filters">{controls}</div>', '<p id="items-count"></p>',
        f'<table id="items"><thead><tr>{head}</tr></thead><tbody id="items-body"></tbody></table>',
        '<button id="items-more" type="button" hidden>show more</button>',
        f'<script type="application/json" id="records">{_json_block(records_data(runs))}</script>',
        f"<script>{script()}</script>",
    ])
