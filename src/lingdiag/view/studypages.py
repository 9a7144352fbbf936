"""The viewer's pages of a study, drawn in the report's shell from escaped text only: the study (its
grid, models in order, runs not done with why, the chosen comparisons, a form for one item), its report
(the sections of ``study report``), and one item across every model and checkpoint with that item's
learning curve (an inline SVG drawn here: no script, nothing fetched).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from lingdiag.report.browser import label_text, outcome
from lingdiag.report.markup import table_html
from lingdiag.report.sections import Fragment
from lingdiag.rundir import Status
from lingdiag.rundir.study import StudyModel
from lingdiag.study.status import GridRow
from lingdiag.view.pages import a, href, page, surprisal_html
from lingdiag.view.scores import scores
from lingdiag.view.study import ItemPoint, ItemRow, StudyGroup
from lingdiag.view.surprisal import scored

NOT_DONE = (Status.FAILED, Status.GAVE_UP, Status.STALE, Status.UNCHECKED, Status.UNREADABLE, Status.PARTIAL,
            Status.RUNNING, Status.PLANNED)
"""The grid's states listed under "Not done", in this order."""


def name_html(text: str) -> str:
    """A name from a study file or a run (a model's, a suite's), escaped and isolated (``<bdi>``): a
    right-to-left override in it reverses nothing outside it.
    """
    return f"<bdi>{escape(text)}</bdi>"


def link_html(path: str, text: str, **query: str | int) -> str:
    """A link to a viewer page whose text is a name (:func:`name_html`)."""
    return f'<a href="{href(path, **query)}">{name_html(text)}</a>'


def _section(anchor: str, title: str, inner: str) -> Fragment:
    from lingdiag.report.sections import Link

    return Fragment(f'<section id="{anchor}"><h2>{escape(title)}</h2>{inner}</section>', (Link(anchor, title),))


def size_text(n: float | None) -> str:
    """A parameter count as the study file writes it (``135M``, ``1.7B``)."""
    return "" if n is None else (f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M")


def _cells_html(header: Sequence[str], rows: Sequence[Sequence[str]], raw: int = -1) -> str:
    """A table of names (:func:`name_html`), but column ``raw`` (lingdiag's own markup, a link)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c if k == raw else name_html(c)}</td>" for k, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def study_page(study: StudyGroup, rows: Sequence[GridRow], note: str = "") -> str:
    """A study: its runs (the grid), its models in order, what is not done and why, the chosen comparisons,
    and a form for one item across every model.
    """
    gid, name = study.group.id, study.state.name
    links = (f'<p>{a("/study", "The study report", id=gid)} · '
             f'{a("/group", "runs as a plain group", id=gid, plain=1)}</p>')
    grid = _cells_html(["Model", "Suite", "Language", "State", "Items", "Failed attempts", "Reason"], [
        [link_html("/run", r.model, id=study.ids[r.key]) if r.key in study.ids else name_html(r.model), r.suite,
         r.language or "", r.status, f"{r.items_done}/{r.items_total}", str(r.attempts), r.reason or ""]
        for r in rows], raw=0)
    models = _cells_html(["Model", "Family", "Size", "Step", "Tokens", "Checkpoint of"],
                         [[m.label, m.family, size_text(m.n_params), "" if m.step is None else str(m.step),
                           "" if m.tokens is None else f"{m.tokens:g}", m.base or ""] for m in study.models])
    waiting = sorted((r for r in rows if r.status != Status.DONE), key=lambda r: NOT_DONE.index(r.status)
                     if r.status in NOT_DONE else len(NOT_DONE))
    not_done = "".join(f'<li class="state-{escape(r.status.replace(" ", "-"))}">{name_html(r.model)} × '
                       f"{name_html(r.suite)}: {escape(f'{r.status}, {r.items_done}/{r.items_total} items')}"
                       + (f" ({name_html(r.reason)})" if r.reason else "") + "</li>" for r in waiting)
    form = (f'<form class="filters" method="get" action="/study-item"><input type="hidden" name="id" '
            f'value="{escape(gid)}"><label>Item id <input name="item"></label> '
            '<button type="submit">show across the study</button></form>')
    parts = [Fragment(links + (f'<p class="note">{escape(note)}</p>' if note else ""), ()),
             _section("study-runs", "Runs", grid),
             _section("study-models", "Models (by family, size and step)", models),
             _section("study-not-done", "Not done",
                      f"<ul>{not_done}</ul>" if not_done else "<p>Every run is done.</p>"),
             _section("study-compare", "Chosen comparisons", _comparisons(study, rows)),
             _section("study-item", "One item across the study", form)]
    return page(f"study {name}", parts, refresh=5 if any(r.status == Status.RUNNING for r in rows) else None)


def _comparisons(study: StudyGroup, rows: Sequence[GridRow]) -> str:
    """A compare page per chosen pair and suite both ran (A first: A − B, as ``lingdiag compare A B``); a pair
    with a side not done (given up, failed, stale...) is named with that side's state instead of linked.
    """
    by = {(e.model.label, e.suite): e.key for e in study.state.runs}
    status = {r.key: r.status for r in rows}
    suites = list(dict.fromkeys(e.suite for e in study.state.runs))
    links = []
    for c in study.state.compare:
        for left in c.a:
            for right in c.b:
                for suite in suites:
                    ka, kb = by.get((left, suite)), by.get((right, suite))
                    if ka is None or kb is None:
                        continue
                    pair = f"{name_html(left)} (A) vs {name_html(right)} (B) on {name_html(suite)}"
                    waiting = [(n, status.get(k, Status.PLANNED)) for n, k in ((left, ka), (right, kb))
                               if status.get(k) != Status.DONE or k not in study.ids]
                    if waiting:
                        links.append(f"<li>{name_html(c.name)}: {pair}: not compared ("
                                     + ", ".join(f"{name_html(n)} {escape(s)}" for n, s in waiting) + ")</li>")
                        continue
                    where = href("/compare", a=study.ids[ka], b=study.ids[kb])
                    links.append(f'<li>{name_html(c.name)}: <a href="{where}">{pair}</a></li>')
    if not study.state.compare:
        return "<p>The study file names no comparison (<code>compare: [[A, B]]</code>).</p>"
    return f"<ul>{''.join(links)}</ul>" if links else "<p>No chosen pair has runs of one suite on disk yet.</p>"


def study_report_page(study: StudyGroup, parts: Sequence[Fragment], note: str = "") -> str:
    """The study report's sections (``study report``'s), under a link back to the study."""
    head = Fragment(f'<p>{a("/group", "The study", id=study.group.id)}</p>'
                    + (f'<p class="note">{escape(note)}</p>' if note else ""), ())
    return page(f"study report: {study.state.name}", [head, *parts])


def _model_cells(m: StudyModel) -> list[str]:
    return [m.label, m.family, size_text(m.n_params), "" if m.step is None else str(m.step)]


def _score_text(row: ItemRow) -> str:
    """The margin where the label is a choice among scored texts; else the log-probs (and what decided it)."""
    found = scores(row.record)
    if found.signed is not None:
        return f"margin {found.signed:+.3f}"
    if found.margin is not None:
        return f"margin {found.margin:.3f} (not graded)"
    held = "; ".join(f"{'holds' if v else 'fails' if v is False else '?'}" for _, v in found.predictions)
    probs = ", ".join(f"{v:.2f}" for _, v in found.logprobs)
    return (f"log-probs {probs}" if probs else "") + (f"; predictions: {held}" if held else "")


def item_table(rows: Sequence[ItemRow]) -> str:
    """The item's records side by side, one row per model and condition, in the study's order; each record's
    surprisal (where it was scored per token, or by region) folded under its row.
    """
    body = []
    for r in rows:
        rec = r.record
        texts = scored(rec)
        surprisal = f"<details><summary>surprisal</summary>{surprisal_html(texts)}</details>" if texts else ""
        cells = [*_model_cells(r.entry.model), r.entry.suite, rec.condition, label_text(rec), rec.gold or "—",
                 outcome(rec), _score_text(r)]
        body.append(f'<tr class="item-row {escape(outcome(rec).replace(" ", "-"))}" '
                    f'data-model="{escape(r.entry.model.label)}">'
                    + "".join(f"<td>{name_html(c)}</td>" for c in cells)
                    + f"<td>{surprisal}</td><td>{a('/item', 'record', id=r.run_id, line=r.line)}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("Model", "Family", "Size", "Step", "Suite", "Condition", "Label", "Gold",
                                               "Outcome", "Margin (+ right, − wrong) or log-probs", "Surprisal",
                                               "Record"))
    return f'<table class="across"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def curve_svg(points: Sequence[ItemPoint], width: int = 520, height: int = 180) -> str:
    """One item's learning curve: its margin at each checkpoint (or right/wrong where no margin was
    recorded), the decision boundary dashed; green right, red wrong, grey not graded.
    """
    measured = [p for p in points if p.missing is None]  # a curve has one at least: it is drawn from records
    margins = [p.margin for p in measured]
    use_margin = all(m is not None for m in margins)
    ys = [float(m) if use_margin and m is not None else (1.0 if p.correct else 0.0) for p, m in zip(measured, margins,
                                                                                                      strict=True)]
    lo, hi = (min([*ys, 0.0]), max([*ys, 0.0])) if use_margin else (0.0, 1.0)
    hi = hi if hi > lo else lo + 1.0
    x0, x1 = min(p.x for p in points), max(p.x for p in points)
    pad = 40

    def sx(x: float) -> float:
        return pad + (width - 2 * pad) * ((x - x0) / (x1 - x0) if x1 > x0 else 0.5)

    def sy(y: float) -> float:
        return height - pad + (2 * pad - height) * (y - lo) / (hi - lo)

    # The line breaks at a checkpoint not measured, which is marked where it would sit (hollow, on the boundary).
    at = dict(zip([id(p) for p in measured], ys, strict=True))
    runs: list[list[str]] = [[]]
    for p in points:
        if p.missing is None:
            runs[-1].append(f"{sx(p.x):.1f},{sy(at[id(p)]):.1f}")
        elif runs[-1]:
            runs.append([])
    colour = {True: "#282", False: "#b22", None: "#999"}
    base = sy(0.0)
    dots = "".join((f'<circle cx="{sx(p.x):.1f}" cy="{sy(at[id(p)]):.1f}" r="4" fill="{colour[p.correct]}">'
                    if p.missing is None else
                    f'<circle class="missing" cx="{sx(p.x):.1f}" cy="{base:.1f}" r="4" fill="none" stroke="#999">')
                   + f"<title>{escape(p.checkpoint)}: {escape(_point_text(p))}</title></circle>" for p in points)
    boundary = (f'<line x1="{pad}" x2="{width - pad}" y1="{sy(0.0):.1f}" y2="{sy(0.0):.1f}" stroke="#777" '
                'stroke-dasharray="4 3"/>' if use_margin else "")
    what = ("margin: the chosen text's log-prob over the next, + when right, − when wrong" if use_margin
            else "right (1) or wrong (0)")
    axis = escape(points[0].axis)
    labels = (f'<text x="{pad}" y="{height - 8}" font-size="11">{axis} {x0:g}</text>'
              f'<text x="{width - pad}" y="{height - 8}" font-size="11" text-anchor="end">{axis} {x1:g}</text>'
              f'<text x="4" y="14" font-size="11">{escape(what)}</text>')
    return (f'<svg class="item-curve" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{escape(what)} at each checkpoint">{boundary}'
            + "".join(f'<polyline points="{" ".join(r)}" fill="none" stroke="#446"/>' for r in runs if r)
            + f"{dots}{labels}</svg>")


def _point_text(p: ItemPoint) -> str:
    if p.missing is not None:
        return p.missing
    state = "right" if p.correct else "wrong" if p.correct is False else "not graded"
    return state + ("" if p.margin is None else f", margin {p.margin:+.3f}")


def curves_html(curves: Mapping[tuple[str, str, str], Sequence[ItemPoint]]) -> str:
    """Each (model, suite, condition)'s curve of this item, with its values as a table."""
    out = []
    for (model, suite, condition), points in curves.items():
        table = table_html(["Checkpoint", points[0].axis.capitalize(), "Outcome", "Margin"],
                           [[p.checkpoint, f"{p.x:g}", _point_text(p).split(",")[0],
                             "" if p.margin is None else f"{p.margin:+.3f}"] for p in points])
        out.append(f'<div class="curve" data-model="{escape(model)}"><h3>{escape(f"{model}: {suite}, {condition}")}'
                   f"</h3>{curve_svg(points)}{table}</div>")
    return "".join(out) or "<p>No model of the study has checkpoints.</p>"


def study_item_page(study: StudyGroup, item_id: str, rows: Sequence[ItemRow],
                    curves: Mapping[tuple[str, str, str], Sequence[ItemPoint]]) -> str:
    """One item across every model and checkpoint of the study, and its learning curve per model."""
    head = Fragment(f'<p>{a("/group", "The study", id=study.group.id)}</p>', ())
    across = item_table(rows) if rows else f"<p>No run of the study holds item {escape(item_id)!s}.</p>"
    return page(f"item {item_id} across study {study.state.name}", [
        head, _section("across", "This item across the study", across),
        _section("item-curves", "This item's learning curve", curves_html(curves))])
