"""The viewer's pages, drawn in the report's shell (:func:`lingdiag.report.html.shell`) from escaped
text only: no page carries a script, so the Content-Security-Policy allows none, and model output,
prompts and dataset text are shown as text whatever they hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlencode

from lingdiag.analysis.compare import METHODS, Comparison
from lingdiag.io.markdown import fmt
from lingdiag.records import ItemRecord, as_text, thought
from lingdiag.report.browser import label_text, outcome, thinking_text
from lingdiag.report.html import shell
from lingdiag.report.markup import table_html
from lingdiag.report.sections import Fragment, Link
from lingdiag.rundir.status import Status
from lingdiag.view import difficulty
from lingdiag.view.compared import KINDS, Pairs
from lingdiag.view.filters import OUTCOME_CHOICES, Filter
from lingdiag.view.scores import by_formula, scores
from lingdiag.view.surprisal import Scored, scored

PAGE_SIZE = 100
"""Records on one items page."""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One line of the runs list."""

    id: str
    group: str | None
    suite: str
    model: str
    conditions: Sequence[str]
    done: int
    planned: int | None
    state: Status
    """The run directory's word for its state (``lingdiag.rundir.state.RunState.status``; in a study, its grid's)."""
    why: str | None = None
    """What the run's report says above a run not finished and current (``RunState.line``)."""


def href(path: str, **query: str | int) -> str:
    """A link to one of the viewer's pages (escaped for an attribute)."""
    return escape(path + ("?" + urlencode(query) if query else ""))


def a(path: str, text: str, **query: str | int) -> str:
    """An anchor with escaped text."""
    return f'<a href="{href(path, **query)}">{escape(text)}</a>'


def _section(anchor: str, title: str, inner: str) -> Fragment:
    return Fragment(f'<section id="{anchor}"><h2>{escape(title)}</h2>{inner}</section>', (Link(anchor, title),))


def page(title: str, parts: Sequence[Fragment], refresh: int | None = None) -> str:
    """A viewer page: a link back to the runs list, then the parts."""
    back = Fragment('<p><a href="/">All runs and studies</a></p>', ())
    return shell(f"lingdiag view: {escape(title)}", escape(title), [back, *parts], refresh)


def _select(name: str, label: str, values: Sequence[str], chosen: str, blank: str = "all") -> str:
    options = "".join(f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{escape(v)}</option>'
                      for v in values)
    return (f'<label>{escape(label)} <select name="{name}"><option value="">{escape(blank)}</option>'
            f"{options}</select></label>")


def _runs_table(header: Sequence[str], rows: Sequence[RunRow], cells: Callable[[RunRow], Sequence[str]]) -> str:
    """A table of runs, each headed by a link to its page, every cell escaped."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(f"<tr><td>{a('/run', r.id, id=r.id)}</td>" + "".join(f"<td>{escape(c)}</td>" for c in cells(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def runs_page(rows: Sequence[RunRow], groups: Mapping[str, tuple[str, bool, int]]) -> str:
    """Every run with its state; every group (study) with a link; a form to compare two runs."""
    table = _runs_table(["Run", "Suite", "Model", "Conditions", "Items done / planned", "State"], rows,
                        lambda r: [r.suite, r.model, ", ".join(r.conditions),
                                   f"{r.done} / {'?' if r.planned is None else r.planned}",
                                   r.state + (f": {r.why}" if r.why and r.state != Status.RUNNING else "")])
    studies = "".join(f"<li>{a('/group', path, id=gid)} ({n} runs{', study' if study else ''})</li>"
                      for gid, (path, study, n) in groups.items())
    ids = [r.id for r in rows]
    form = (f'<form class="filters" method="get" action="/compare">{_select("a", "A", ids, "", "choose")} '
            f'{_select("b", "B", ids, "", "choose")} <button type="submit">compare</button></form>')
    running = any(r.state == Status.RUNNING for r in rows)
    return page("runs and studies", [
        _section("runs", "Runs", table if rows else "<p>No run directory found.</p>"),
        _section("studies", "Studies and groups", f"<ul>{studies}</ul>" if studies else "<p>None.</p>"),
        _section("compare", "Compare two runs", form)], refresh=5 if running else None)


def run_page(run_id: str, parts: Sequence[Fragment], conditions: Sequence[str], note: str = "") -> str:
    """A run's report (the registered sections), with links to its items and a form comparing two conditions."""
    links = (f'<p>{a("/items", "Items of this run", id=run_id)} · '
             + " · ".join(a("/raw", name, id=run_id, name=name) for name in ("meta.json", "metrics.json", "table.md"))
             + "</p>")
    form = (f'<form class="filters" method="get" action="/compare"><input type="hidden" name="a" '
            f'value="{escape(run_id)}">{_select("ca", "Condition A", conditions, "", "choose")} '
            f'{_select("cb", "Condition B", conditions, "", "choose")} <button type="submit">compare</button></form>')
    head = Fragment(links + (f'<p class="note">{escape(note)}</p>' if note else ""), ())
    return page(f"run {run_id}", [head, *parts, _section("compare", "Compare two conditions", form)])


def _filters(run_id: str, f: Filter, conditions: Sequence[str]) -> str:
    text = "".join(f'<label>{escape(label)} <input name="{name}" value="{escape(getattr(f, name))}"'
                   f' placeholder="{escape(hint)}"></label> '
                   for name, label, hint in (("tag", "Tag", "name=value"), ("language", "Language", "en"),
                                             ("text", "Search", "text in prompts or outputs")))
    return (f'<form class="filters" method="get" action="/items"><input type="hidden" name="id" '
            f'value="{escape(run_id)}">{_select("condition", "Condition", conditions, f.condition)} '
            f'{_select("outcome", "Outcome", OUTCOME_CHOICES, f.outcome)} {text}'
            '<button type="submit">filter</button></form>')


def items_page(run_id: str, f: Filter, conditions: Sequence[str], found: Sequence[tuple[int, ItemRecord]],
               total: int, next_start: int | None, params: difficulty.Params | None = None,
               order: difficulty.ItemOrder | None = None) -> str:
    """One page of a run's records (``found``: line number and record), with the filters and a link onwards;
    with the item model saved for the run (``params``), its difficulty and discrimination columns, sorted and
    filtered as ``order`` says.
    """
    order = order or difficulty.ItemOrder()

    def irt(r: ItemRecord) -> str:
        return difficulty.cells(r, params) if params else ""
    rows = "".join(
        f'<tr class="item {escape(outcome(r).replace(" ", "-"))}"><td>{k + 1}</td><td dir="auto">{escape(r.condition)}'
        f'</td><td dir="auto">{a("/item", r.item_id, id=run_id, line=k)}</td><td dir="auto">'
        f'{escape(", ".join(f"{n}={v}" for n, v in r.tags.items() if isinstance(v, str | int | float)))}</td>'
        f'<td dir="auto">{escape(r.gold or "")}</td><td dir="auto">{escape(label_text(r))}</td>'
        f"<td>{escape(outcome(r))}</td>{irt(r)}</tr>" for k, r in found)
    head = "".join(f"<th>{h}</th>" for h in ("Line", "Condition", "Item", "Tags", "Gold", "Predicted", "Outcome")) \
        + (difficulty.header() if params else "")
    count = (f"{len(found)} matching records shown" if f.active() or (params and order.active())
             else f"records {found[0][0] + 1}–{found[-1][0] + 1} of {total}" if found else f"0 of {total} records")
    more = a("/items", "next page", id=run_id, start=next_start, **f.query(), **order.query()) \
        if next_start is not None else ""
    sort = difficulty.controls(run_id, order, f.query()) if params else ""
    body = (f"{_filters(run_id, f, conditions)}{sort}<p id=\"items-count\">{escape(count)}</p>"
            f'<table id="items"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table><p>{more}</p>')
    return page(f"items of run {run_id}", [_section("items", "Items", body)])


def _pre(title: str, text: str) -> str:
    return f'<p>{escape(title)}</p><pre dir="auto">{escape(text)}</pre>'


def _choices(r: ItemRecord) -> str:
    """Each scored request's log-prob; the margin between the best two where the label is the choice among
    them, or the predictions that decided it where formulas over region surprisals did (SyntaxGym).
    """
    found = scores(r)
    if not found.logprobs:
        return ""
    decision = f"; decision: {json.dumps(r.decision, sort_keys=True)}" if r.decision else ""
    table = table_html(["Request", "Log-prob"], [[k + 1, f"{v:.4f}"] for k, v in found.logprobs])
    if found.predictions or by_formula(r):
        held = "; ".join(f"{f}: {'holds' if v else 'fails' if v is False else '?'}" for f, v in found.predictions)
        return table + f'<p class="predictions">Decided by its predictions, not by a margin: {escape(held)}</p>'
    margin = "—" if found.margin is None else f"{found.margin:.4f}"
    return table + f"<p>Margin (best two): {escape(margin)}{escape(decision)}</p>"


def surprisal_html(texts: Sequence[Scored]) -> str:
    """Each scored text token by token, coloured by surprisal (darker: more surprising), the value on
    hover and in ``data-bits``; regions boxed and numbered; a minimal pair's differing words underlined.
    """
    out = []
    for s in texts:
        spans = []
        for t in s.tokens:
            light = 100 - min(t.bits, 20.0) * 2.5
            region = f"; region {s.regions[t.region][2]}" if t.region is not None and t.region < len(s.regions) else ""
            style = f"background:hsl(20,90%,{light:.0f}%)" + (";text-decoration:underline 2px" if t.differs else "")
            spans.append(f'<span class="tok{" differs" if t.differs else ""}" style="{style}" '
                         f'data-bits="{t.bits:.6f}" title="{escape(s.text[t.start:t.end])}: {t.bits:.3f} bits'
                         f'{escape(region)}">{escape(s.text[t.start:t.end])}</span>')
        marks = " ".join(f'<span class="region" style="border:1px solid #888;padding:0 .2em">{escape(n)}: '
                         f"{escape(s.text[a:b])}</span>" for a, b, n in s.regions)
        what = " (by region, as the prediction recorded it; run with --per-token for tokens)" if s.per_region else ""
        out.append(f'<div class="scored" data-name="{escape(s.name)}"><p>{escape(s.name + what)}</p>'
                   f'<pre dir="auto">{"".join(spans)}</pre>' + (f"<p>Regions: {marks}</p>" if marks else "") + "</div>")
    return "".join(out)


def record_html(r: ItemRecord, where: str = "") -> str:
    """One record in full: every request, the thinking, the raw output, the parsed label, choice scores, surprisal."""
    parts = [f'<p dir="auto">{escape(where)} condition {escape(r.condition)}, item {escape(r.item_id)}: '
             f"predicted <b>{escape(label_text(r))}</b>, gold {escape(r.gold or '—')}, {escape(outcome(r))}</p>"]
    parts += [_pre(f"Request {k + 1}", as_text(p)) for k, p in enumerate(r.prompts)]
    if any(thought(o) for o in r.outputs):
        parts.append(_pre("Thinking", thinking_text(r)))
    parts += [_pre(f"Raw output {k + 1}", as_text(o)) for k, o in enumerate(r.outputs)]
    if r.error:
        parts.append(_pre("Error", r.error))
    parts.append(_pre("Parsed (detail)", json.dumps(r.detail, indent=1, sort_keys=True, ensure_ascii=False)))
    parts.append(_choices(r))
    texts = scored(r)
    if texts:
        parts.append(f"<h3>Surprisal (bits)</h3>{surprisal_html(texts)}")
    return f'<div class="record">{"".join(parts)}</div>'


def side_by_side(cells: Sequence[tuple[str, ItemRecord | None]]) -> str:
    """Records beside each other, each under its heading."""
    # A grid of equal columns (the report's .side wraps below 600 px a column; records compare side by side).
    grid = f"display:grid;grid-template-columns:repeat({max(len(cells), 1)},minmax(0,1fr));gap:1em"
    return f'<div class="side-by-side" style="{grid}">' + "".join(
        f"<div><h3>{escape(title)}</h3>{record_html(r) if r else '<p>No record.</p>'}</div>" for title, r in cells) \
        + "</div>"


def item_page(run_id: str, line: int, r: ItemRecord, others: Sequence[tuple[str, ItemRecord]], across: str = "") -> str:
    """A record in full, then the same item's records in the other runs, side by side (or, for a study's
    run, ``across``: the item across every model and checkpoint of the study).
    """
    if across:
        rest = _section("across", "This item across the study", across)
    else:
        rest = _section("others", "This item in other runs",
                        side_by_side(others) if others else "<p>No other run holds this item.</p>")
    return page(f"item {r.item_id} of run {run_id}", [_section("record", f"Line {line + 1}", record_html(r)), rest])


def comparison_table(rows: Sequence[Comparison]) -> str:
    """The paired tests as ``lingdiag compare`` prints them (its cells, ``io.markdown.fmt``)."""
    return table_html(["Condition", "N", "Acc A", "Acc B", "A − B", "95% CI", "A only", "B only", "p", "p (Holm)"],
                      [[r.condition, r.n, fmt(r.acc_a), fmt(r.acc_b), fmt(r.diff),
                        f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]", r.only_a, r.only_b, f"{r.p:.3g}",
                        f"{r.p_holm:.3g}"] for r in rows])


def compare_page(title: str, pairs: Pairs, start: int, a_id: str, b_id: str, query: Mapping[str, str]) -> str:
    """Counts and McNemar, then the items paired by id, a page of :data:`PAGE_SIZE` at a time (A right and B
    wrong first, then the reverse, then the rest), each linking to its two records in full.
    """
    methods = "; ".join(f"{k}: {v}" for k, v in METHODS.items())
    summary = "; ".join(f"{k}: {v}" for k, v in pairs.counts().items())
    names, items, labels = (pairs.a.vocab.conditions.names, pairs.a.vocab.items.names, pairs.a.vocab.labels.names)
    ca, cb = pairs.a.columns, pairs.b.columns
    stop = min(start + PAGE_SIZE, len(pairs))
    body = "".join(
        f'<tr class="pair" data-kind="{escape(KINDS[int(pairs.kind[k])])}"><td dir="auto">'
        f"{escape(names[ca.condition[la]])}</td>"
        f"<td dir=\"auto\">{a('/item', items[ca.item[la]], id=a_id, line=la)}</td>"
        f"<td dir=\"auto\">{a('/item', labels[ca.label[la]], id=a_id, line=la)}</td>"
        f"<td dir=\"auto\">{a('/item', labels[cb.label[lb]], id=b_id, line=lb)}</td>"
        f"<td>{escape(KINDS[int(pairs.kind[k])])}</td></tr>"
        for k in range(start, stop) for la, lb in [(int(pairs.line_a[k]), int(pairs.line_b[k]))])
    head = "".join(f"<th>{h}</th>" for h in ("Condition", "Item", "A's label", "B's label", "Kind"))
    where = f"pairs {start + 1}–{stop} of {len(pairs)}" if len(pairs) else "no pair"
    more = " · ".join(link for link in (
        a("/compare", "previous page", **query, start=max(start - PAGE_SIZE, 0)) if start > 0 else "",
        a("/compare", "next page", **query, start=stop) if stop < len(pairs) else "") if link)
    return page(title, [
        _section("tests", "Paired tests", comparison_table(pairs.rows) + f"<p>A − B: A's accuracy minus B's. "
                 f"{escape(methods)}</p>"),
        _section("pairs", "Items paired by id", f'<p id="pair-counts">{escape(summary)}</p><p id="pair-range">'
                 f'{escape(where)}</p><table id="pairs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
                 f"<p>{more}</p>")])


def group_page(group_id: str, path: str, rows: Sequence[RunRow], item: str, found: Sequence[tuple[str, Any]],
               note: str = "") -> str:
    """A group's runs, and one item across all of them."""
    table = _runs_table(["Run", "Model", "Suite", "State"], rows, lambda r: [r.model, r.suite, r.state])
    form = (f'<form class="filters" method="get" action="/group"><input type="hidden" name="id" '
            f'value="{escape(group_id)}"><label>Item id <input name="item" value="{escape(item)}"></label> '
            '<button type="submit">show</button></form>')
    across = side_by_side([(title, r) for title, r in found]) if found else ""
    head = Fragment(f'<p class="note">{escape(note)}</p>' if note else "", ())
    return page(f"group {path}", [head, _section("runs", "Runs", table),
                                  _section("item", "One item across the runs", form + across)])


def error_page(status: int, message: str) -> str:
    """A refusal or a missing page, in one line."""
    return page(f"error {status}", [_section("error", "Error", f'<p class="note">{escape(message)}</p>')])
