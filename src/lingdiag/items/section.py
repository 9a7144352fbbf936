"""The fit where people read it: the study report's "Items" section (flagged items first, each
linked to its page in ``lingdiag view``) and the difficulty and discrimination of a run's items
for the viewer's items pages.

A study reuses the fit saved at ``STUDY/items`` (``lingdiag items fit STUDY --out STUDY/items``)
when it was fitted from the very answers the study holds now (each cell's fingerprint); otherwise
the report fits its done runs itself and says so. A run outside a study finds the fit saved in
``items/`` beside it (``runs/items`` for ``runs/<run>``), if that fit read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

from lingdiag.errors import LingdiagError
from lingdiag.io.markdown import markdown_table
from lingdiag.items.fitted import FIT_JSON, CellFit, ItemFit, fit_cells, load
from lingdiag.items.human import from_tables
from lingdiag.items.irt import Z95
from lingdiag.items.matrix import ResponseMatrix
from lingdiag.items.tables import flagged_first, identified
from lingdiag.items.text import item_texts
from lingdiag.reading.item_table import ItemTable
from lingdiag.rundir.study import place_of

SAVED = "items"
"""The folder of a study (or beside runs) where ``lingdiag items fit`` is expected to save the fit."""
VIEWER = "http://127.0.0.1:8765"
"""``lingdiag view STUDY`` at its default address: where the static report's item links point."""
SHOWN = 200
"""Flagged items listed in the section (the rest are in ``items.csv``)."""
TEXT_SHOWN = 160
"""Characters of an item's text in the section (``items.csv`` holds more)."""
SCALE = ("Abilities and difficulties are on the scale the fit sets (θ ~ N(0, 1) over these models): their zero and "
         "unit are this panel's, not comparable across studies.")


def _saved(study: Path, cells: Sequence[ResponseMatrix]) -> ItemFit | None:
    """The fit saved in the study, if every cell it holds is the one the runs give now."""
    if not (study / SAVED / FIT_JSON).is_file():
        return None
    try:
        f = load(study / SAVED)
    except LingdiagError:
        return None
    now = {m.key: m.fingerprint() for m in cells}
    return f if f.cells and all(now.get(c.key) == c.fingerprint for c in f.cells) else None


def study_fit(study: Path, cells: Sequence[ResponseMatrix], details: Sequence[ItemTable]) -> tuple[ItemFit | None, str]:
    """The study's fit (saved, or made now) and one line saying which, or why there is none.

    Args:
        study: The study directory.
        cells: Its matrices (one byte per answer).
        details: The item tables of the runs (one per suite is enough): the items' text, gold and human ratings.
    """
    saved = _saved(study, cells)
    if saved is not None:
        return saved, f"The fit saved in {SAVED}/ ({saved.why or saved.kind.upper()}), made from the answers the " \
                      "study holds now."
    try:
        ratings, _ = from_tables(details)
        texts = item_texts(details)
        gold = {key: t.gold for key, t in texts.items() if t.gold is not None}
        f = fit_cells(cells, None, human=ratings, gold=gold, texts=texts)
    except LingdiagError as e:
        return None, f"No item model: {e}"
    return f, (f"Fitted for this report ({f.why}); save a fit with `lingdiag items fit {study.name} --out "
               f"{study.name}/{SAVED}` to reuse it (and to show it in `lingdiag view`).")


def _interval(x: float, se: float) -> str:
    return "" if not np.isfinite(x) else f"{x:.2f} [{x - Z95 * se:.2f}, {x + Z95 * se:.2f}]" \
        if np.isfinite(se) else f"{x:.2f}"


def _viewer_id(study: Path, run: str) -> str:
    """The id ``lingdiag view STUDY`` gives the run (the study given first)."""
    try:
        return "0/" + Path(run).resolve().relative_to(study.resolve()).as_posix()
    except ValueError:
        return ""


def _rows(study: Path, f: ItemFit, c: CellFit, links: bool) -> tuple[list[list[str]], list[str], int]:
    """The cell's flagged items (first :data:`SHOWN`) as table rows, the link of each, and how many are flagged."""
    flagged = c.item_flags(f.kind, f.policy)
    order = [j for j in flagged_first(c, f) if flagged[j]]
    rows, hrefs = [], []
    b, a = identified(c, f)
    for j in order[:SHOWN]:
        right = c.responses[:, j] == 1
        graded = c.responses[:, j] >= 0
        run = next((c.runs[m] for m in range(len(c.models)) if graded[m] and right[m]),
                   c.runs[int(np.argmax(graded))])
        rid = _viewer_id(study, run)
        hrefs.append(f"{VIEWER if links else ''}/items?" + urlencode({"id": rid, "condition": c.condition,
                                                                      "text": c.item_ids[j]}) if rid else "")
        shown = c.texts.get(c.item_ids[j])
        text = shown.text if shown else ""
        rows.append([c.item_ids[j], text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN - 1] + "…",
                     (shown.gold or "") if shown else "", f"{int(right.sum())}/{int(graded.sum())}",
                     _interval(float(b[j]), float(c.difficulty_se[j])) or "–",
                     _interval(float(a[j]), float(c.slope_se[j])) or "–", "; ".join(flagged[j])])
    return rows, hrefs, len(order)


HEADER = ["Item", "Text", "Gold", "Right / graded", "Difficulty [95% CI]", "Discrimination [95% CI]", "Flags"]
EMPTY = ("–: not identified (every model right or wrong, or a discrimination within ±0.25, where −c/a runs off); "
         "text and gold are empty where the runs' records carry none.")


@dataclass(frozen=True)
class ItemsSection:
    """The study report's section: its markdown (for ``--tables``) and its HTML (with links)."""

    anchor: str
    title: str
    text: str
    html: str


def study_section(study: Path, cells: Sequence[ResponseMatrix], details: Sequence[ItemTable], *,
                  static: bool = True) -> ItemsSection:
    """The "Items" section of the study report in ``study`` over its ``cells`` (``details``: the runs' item
    tables, for the items' text, gold and human ratings).
    """
    f, how = study_fit(Path(study), cells, details)
    if f is None:
        return ItemsSection("study-irt", "Items", how + "\n", f"<p>{escape(how)}</p>")
    text, html = [how, ""], [f"<p>{escape(how)}</p>"]
    html.append(f"<p>{escape(f.priors.describe())}. {escape(SCALE)} Links open the item in `lingdiag view "
                f"{study.name}`" + (f" at {VIEWER}" if static else "") + ".</p>")
    text.append(f"{f.priors.describe()}. {SCALE}")
    for line in f.warnings:
        text.append(f"- **Warning**: {line}")
        html.append(f'<p class="note"><strong>Warning</strong>: {escape(line)}</p>')
    for line in (*f.notes, *f.left_out):
        text.append(f"- {line}")
        html.append(f'<p class="note">{escape(line)}</p>')
    for c in f.cells:
        rows, hrefs, n = _rows(Path(study), f, c, static)
        title = f"{c.suite}, {c.condition}: {n} of {len(c.item_ids)} items flagged ({len(c.models)} models)"
        text += ["", f"### {title}", "", markdown_table(HEADER, rows) + f"\n{EMPTY}\n" if rows else
                 "No item flagged.\n"]
        body = "".join("<tr>" + "".join(
            f"<td>{escape(v)}</td>" if k or not href else f'<td><a href="{escape(href)}">{escape(v)}</a></td>'
            for k, v in enumerate(row)) + "</tr>" for row, href in zip(rows, hrefs, strict=True))
        head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
        more = f"<p>{n - SHOWN} more flagged items in items.csv.</p>" if n > SHOWN else ""
        html.append(f"<h3>{escape(title)}</h3>" + (f'<table class="irt-flagged"><thead><tr>{head}</tr></thead>'
                                                   f"<tbody>{body}</tbody></table><p>{escape(EMPTY)}</p>{more}"
                                                   if rows else
                                                   "<p>No item flagged.</p>"))
        abilities = [[m, _interval(float(c.ability[k]), float(c.ability_se[k])), int(c.answered[k])]
                     for k, m in enumerate(c.models)]
        text.append(markdown_table(["Model", "Ability [95% CI]", "Items answered"], abilities))
        html.append("<table><thead><tr><th>Model</th><th>Ability [95% CI]</th><th>Items answered</th></tr></thead>"
                    "<tbody>" + "".join(f"<tr><td>{escape(str(a))}</td><td>{escape(str(b))}</td><td>{c_}</td></tr>"
                                        for a, b, c_ in abilities) + "</tbody></table>")
    return ItemsSection("study-irt", "Items", "\n".join(text) + "\n", "".join(html))


@dataclass(frozen=True)
class ItemParams:
    """One item's numbers for the viewer."""

    difficulty: float
    discrimination: float
    flagged: bool


def run_params(run_dir: Path) -> dict[tuple[str, str], ItemParams]:
    """(condition, item id) → the item's numbers in the fit saved for ``run_dir`` (empty: none)."""
    run_dir = Path(run_dir).resolve()
    place = place_of(run_dir)
    where = (place.study if place else run_dir.parent) / SAVED
    if not (where / FIT_JSON).is_file():
        return {}
    try:
        f = load(where)
    except LingdiagError:
        return {}
    out = {}
    for c in f.cells:
        if not any(Path(r).resolve() == run_dir for r in c.runs):
            continue
        flagged = c.item_flags(f.kind, f.policy)
        b, a = identified(c, f)
        for j, item in enumerate(c.item_ids):
            out[(c.condition, item)] = ItemParams(float(b[j]), float(a[j]), bool(flagged[j]))
    return out
