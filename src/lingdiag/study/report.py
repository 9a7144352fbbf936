"""``study report``: the study's own sections (findings, the grid, models × conditions, learning
curves, the comparisons the study file chose, adjacent tests, the mixed model, items across models,
agreement, competence against performance, what failed) as Markdown, laid out before the run report's
summary by ``lingdiag.report.html`` (one page shell, one escaping), written as Markdown and LaTeX tables,
or summarised on the terminal.

The runs are read one at a time as streams into their summaries (``lingdiag.reading.summary``), so the
memory a report takes grows with the number of runs and items, not with the records: a study of forty
models × 100,000 items is reported in minutes (``bench/study_scale_report.py``). A section is one entry
of :data:`SECTIONS`: its anchor, its title and the function drawing it from the :class:`Study`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from html import escape
from pathlib import Path

import numpy as np

from lingdiag import figures as figs
from lingdiag.analysis import competence, mixed
from lingdiag.analysis.compare import METHODS
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.figures import Figure
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.limits import Limit
from lingdiag.io.markdown import markdown_table
from lingdiag.io.paths import portable
from lingdiag.metrics.stats import whole_percents
from lingdiag.reading import RunSummary, Vocabularies, load_run
from lingdiag.reading.summary import NONE, NOT_GRADED, RIGHT, summarize_all
from lingdiag.report.export import markdown_to_latex
from lingdiag.report.html import render_html
from lingdiag.report.markup import figure_html, markdown_to_html
from lingdiag.report.sections import Fragment, Link, wrap
from lingdiag.report.tables import tables
from lingdiag.rundir.study import StudyState, read_state
from lingdiag.study import across
from lingdiag.study.across import DIRECTION, ONSET_RULE, PAIR_FAMILY, TABLE_FAMILY, Missing, Pair, Paired, StudyRun
from lingdiag.study.status import GridRow, grid

ITEMS_SHOWN = 200
"""Rows of an items-across-models table (the items fewest models get right first, where there are more)."""
NAMES_SHOWN = 20
"""Models named in one cell (an item's models right); more are counted."""
AGREEMENT_MODELS = 40
"""Models in an agreement matrix (its cells grow with their square); the study's first ones in its order."""
MIXED_RECORDS = Limit("LINGDIAG_STUDY_MIXED_RECORDS", 5000, "graded answers per suite in the study's mixed model")
"""Above this, the mixed model is fitted on a seeded sample of items (every model's answers on them):
statsmodels' variational fit takes about a minute per 10,000 answers on a 2-core machine."""
ITEM_FIT_RECORDS = Limit("LINGDIAG_STUDY_IRT_RECORDS", 2_000_000, "records the study report's item model reads")
"""Above this, the report's Items section does not fit the item model itself (it holds every answer) and
points to ``lingdiag items fit``."""
RUN_SECTIONS_RECORDS = Limit("LINGDIAG_STUDY_HTML_RECORDS", 200_000, "records in the run sections of a study's HTML")
"""Above this, the HTML report leaves out the run report's own sections (its item browser carries every
record in the page); ``lingdiag view`` pages them instead."""


@dataclass(frozen=True)
class Study:
    """What every section of the study report reads, computed once."""

    state: StudyState
    grid: list[GridRow]
    runs: list[StudyRun]
    """The done runs, summarised, in the study's model order (family, size, step)."""
    unreadable: list[str]
    """Runs the grid calls done that could not be read, with why."""
    directory: Path
    """The study directory."""
    seed: int = 0

    @cached_property
    def missing(self) -> list[Missing]:
        """The planned runs in no number of the report (:func:`unmeasured`)."""
        return unmeasured(self.state, self.grid, self.runs)

    @cached_property
    def tables(self) -> dict[across.Cell, across.CellTable]:
        """Each cell across its models."""
        return across.cells(self.runs)

    @property
    def labels(self) -> list[str]:
        """The label vocabulary of the runs' summaries."""
        return self.runs[0].summary.vocab.labels.names if self.runs else []

    @property
    def items(self) -> list[str]:
        """The item vocabulary of the runs' summaries."""
        return self.runs[0].summary.vocab.items.names if self.runs else []


Read = Callable[[Path, Vocabularies], RunSummary]
"""How a run is read into its summary where a caller keeps them (the viewer); by default every done run is
read by :func:`~lingdiag.reading.summary.summarize_all` (several processes for a large study)."""


def load(out: Path, *, seed: int = 0, read: Read | None = None, vocab: Vocabularies | None = None) -> Study:
    """The study's state and grid, and its done runs streamed into their summaries.

    Only runs the grid calls done (finished, every item answered, current: ``lingdiag.rundir.state``) are
    read; the others are listed with their state, never reported as current numbers.

    Args:
        out: The study directory.
        seed: Seeds the bootstrap intervals and the mixed model's item sample.
        read: Reads a run into its summary (default: all of them by ``summarize_all``).
        vocab: The codes the summaries share (a new vocabulary unless given).
    """
    state = read_state(out)
    assert state is not None
    rows = grid(out, state)
    done = {r.key for r in rows if r.status == "done"}
    vocab = vocab or Vocabularies()
    entries = [e for e in state.runs if e.key in done]
    if read is None:
        found = summarize_all([e.directory(out) for e in entries], vocab)
    else:
        found = []
        for e in entries:
            try:
                found.append(read(e.directory(out), vocab))
            except LingdiagError as error:
                found.append(error)
    runs, unreadable = [], []
    for entry, summary in zip(entries, found, strict=True):
        if isinstance(summary, LingdiagError):
            unreadable.append(f"{entry.name}: {summary}")
            continue
        labels = summary.run.suite.labels
        runs.append(StudyRun(entry, summary, 1 / len(labels) if labels else 0.5))  # minimal pairs: 2 ways
    return Study(state, rows, across.model_order(runs), unreadable, Path(out), seed)


@dataclass(frozen=True)
class Drawn:
    """A section's Markdown, its figures and the findings it supports (each one sentence)."""

    text: str
    figures: Sequence[Figure] = ()
    found: Sequence[str] = ()
    html: str = ""
    """The section's own HTML (every outside text escaped) where it is more than its markdown (links)."""


def unmeasured(state: StudyState, rows: Sequence[GridRow], runs: Sequence[StudyRun]) -> list[Missing]:
    """The planned runs that are in no number of the report, with their state (``lingdiag.rundir.state``
    through the grid): all but the done runs that were read.
    """
    read = {s.entry.key for s in runs}
    status = {r.key: r.status for r in rows}
    return [Missing(e, "not readable" if status[e.key] == "done" else status[e.key]) for e in state.runs
            if e.key not in read]


NAMED = 10
"""Runs named in one sentence at most; the rest are counted (the tables and the grid list every one)."""


def some(names: Sequence[str], shown: int = NAMED) -> str:
    """``names`` joined, the first ``shown`` of them (:data:`NAMED` by default) and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _missing_line(missing: Sequence[Missing]) -> str:
    """The runs not measured, each with its size where the study gives one and its state."""
    return some([f"{g.label}{f' {_size(g.entry.model.n_params)}' if g.entry.model.n_params else ''} × "
                 f"{g.entry.suite} ({g.why})" for g in missing])


def _ci(a: across.Accuracy) -> str:
    lo, hi = a.ci95
    return "–" if math.isnan(lo) else f"[{lo:.3f}, {hi:.3f}]"


def _size(n: float | None) -> str:
    return "" if n is None else (f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M")


def grid_text(rows: Sequence[GridRow]) -> str:
    """The grid of runs as a table."""
    body = [[r.model, r.suite, r.status, f"{r.items_done}/{r.items_total}", r.attempts, r.reason or ""]
            for r in rows]
    return markdown_table(["Model", "Suite", "Status", "Items", "Failed attempts", "Reason"], body)


def _grid(study: Study) -> Drawn:
    return Drawn(grid_text(study.grid))


def _accuracy(study: Study) -> Drawn:
    """Models × conditions: accuracy with its 95% interval, and per language where items carry one."""
    body, languages = [], []
    for s in study.runs:
        m, c, vocab = s.entry.model, s.summary.columns, s.summary.vocab
        unparsed = s.summary.unparsed
        for code in dict.fromkeys(c.condition.tolist()):
            lines = c.of(code)
            a = across.accuracy(c.outcome[lines])
            body.append([s.entry.suite, vocab.conditions.names[code], m.label, m.family, _size(m.n_params),
                         f"{a.value:.3f}", _ci(a), a.n, int(unparsed[lines].sum()), int(c.error[lines].sum())])
            for lang in sorted(set(c.language[lines].tolist()) - {NONE}, key=lambda k: vocab.languages.names[k]):
                la = across.accuracy(c.outcome[lines][c.language[lines] == lang])
                languages.append([s.entry.suite, vocab.conditions.names[code], m.label, vocab.languages.names[lang],
                                  f"{la.value:.3f}", _ci(la), la.n])
    text = markdown_table(["Suite", "Condition", "Model", "Family", "Size", "Accuracy", "95% CI", "n", "Unparsed",
                           "Errors"], body)
    text += ("\nAccuracy: right / graded (an unparsed answer is wrong; an item the backend failed on is left "
             "out and counted under Errors); 95% CI: Wilson. Models by family, size and training step.\n")
    if languages:
        text += "\n### Per language\n\n" + markdown_table(
            ["Suite", "Condition", "Model", "Language", "Accuracy", "95% CI", "n"], languages)
    return Drawn(text)


def _onset_sentence(found: across.Onset) -> str:
    """What a curve says of the effect, and no more than its missing checkpoints allow."""
    def named(points: Sequence[across.CurvePoint]) -> str:
        return some([p.checkpoint for p in points])

    if found.first is None:
        if not found.before:
            return "never appears"
        return (f"is not present at any measured checkpoint; {named(found.before)} not measured, so whether it "
                "appears is not known")
    if found.before:
        text = (f"is present at {found.first.checkpoint}, where it may not first appear ({named(found.before)} "
                "before it not measured)")
    else:
        text = f"first appears at {found.first.checkpoint}"
    if found.stable is None:
        return text + f"; whether it is stable after it is not known ({named(found.after)} not measured)"
    return text + f" and is {'stable' if found.stable else 'not stable'} after it"


def _curves(study: Study) -> Drawn:
    """The learning-curve tables (checkpoints not measured among them, with why), their figures and the
    findings they support (:func:`_onset_sentence`).
    """
    parts, found = [], []
    curves = across.learning_curves(study.runs, study.missing)
    for (model, cell), points in curves.items():
        body = [[p.checkpoint, "" if p.step is None else p.step, "" if p.tokens is None else f"{p.tokens:g}",
                 "–" if p.missing else f"{p.accuracy.value:.3f}", "–" if p.missing else _ci(p.accuracy),
                 p.accuracy.n, f"{p.chance:.3f}", p.missing or ("yes" if p.present else "no")] for p in points]
        found.append(f"Learning curve of {model} on {cell[0]} {cell[1]}: the effect "
                     f"{_onset_sentence(across.onset(points))}.")
        parts.append(f"### {model}: {cell[0]}, {cell[1]}\n\n" + markdown_table(
            ["Checkpoint", "Step", "Tokens", "Accuracy", "95% CI", "n", "Chance", "Above chance"], body)
            + f"\n{found[-1]}\n")
    drawn = {(model, cell[0]) for model, cell in curves}
    for (model, suite), gone in _grouped(g for g in study.missing if g.entry.model.base is not None).items():
        if (model, suite) not in drawn:
            found.append(f"Learning curve of {model} on {suite}: no checkpoint measured ({_missing_line(gone)}).")
            parts.append(f"### {model}: {suite}\n\n{found[-1]}\n")
    if not parts:
        return Drawn("No model of the study has checkpoints.\n")
    return Drawn("\n".join(parts) + f"\nRule: {ONSET_RULE}.\n", curve_figures(study.runs, study.missing), found)


def _grouped(missing: Iterable[Missing]) -> dict[tuple[str, str], list[Missing]]:
    """(model a checkpoint belongs to, suite) → its checkpoints not measured."""
    out: dict[tuple[str, str], list[Missing]] = defaultdict(list)
    for g in missing:
        out[(str(g.entry.model.base), g.entry.suite)].append(g)
    return dict(out)


def curve_figures(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> list[Figure]:
    """Accuracy against step (or tokens) per model with checkpoints: one line per cell, 95% bars, and each
    cell's chance level as a dashed line; a checkpoint not measured breaks the line and is marked where it
    would sit, and named in the caption.
    """
    curves = across.learning_curves(runs, missing)
    if not curves or not figs.available():
        return []
    plt = figs.pyplot()
    out = []
    for model in dict.fromkeys(m for m, _ in curves):
        fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
        gaps: dict[str, tuple[float, str]] = {}
        chances = set()
        for (m, cell), points in curves.items():
            if m != model:
                continue
            xs = [p.step if p.step is not None else (p.tokens or 0.0) for p in points]
            ys = [math.nan if p.missing else p.accuracy.value for p in points]  # NaN: the line breaks there
            err = [[0.0 if p.missing else y - p.accuracy.ci95[0] for y, p in zip(ys, points, strict=True)],
                   [0.0 if p.missing else p.accuracy.ci95[1] - y for y, p in zip(ys, points, strict=True)]]
            ax.errorbar(xs, ys, yerr=err, fmt="-o", capsize=3, label=f"{cell[0]} {cell[1]}")
            chances.add(points[0].chance)
            gaps.update({f"{p.checkpoint} ({p.missing})": (x, p.checkpoint)  # the tables say which cell
                         for x, p in zip(xs, points, strict=True) if p.missing})
        for chance in sorted(chances):
            ax.axhline(chance, color="#777777", linestyle="--", linewidth=1,
                       label=f"chance ({chance:.2f})" if len(chances) > 1 else "chance")
        marks = dict.fromkeys(gaps.values())
        for x, name in marks:
            ax.axvline(x, color="#999", linestyle=":", linewidth=1)
            if len(marks) <= NAMED:  # more names than that would cover the curve: the caption counts them
                ax.annotate(f"{name}: not measured", (x, 0.02), xycoords=("data", "axes fraction"), rotation=90,
                            fontsize=6, color="#666", va="bottom", ha="right")
        ax.set_xlabel("training step (tokens where no step is given)")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=6)
        caption = "Accuracy at each checkpoint; bars: 95% Wilson intervals; dashed: chance (1 / the number of labels)."
        if gaps:
            caption += f" Not measured (dotted, the line broken there): {some(list(gaps))}."
        out.append(Figure(f"{model}: learning curve", figs.to_png(fig), caption))
    return out


def paired_table(tests: Sequence[Paired], first: str) -> str:
    """Paired tests as one table: A − B with its interval, the discordant items, McNemar's p and both Holm p."""
    body = [[t.name or t.kind + (f" (not measured between: {some(t.between)})" if t.between else ""), t.cell[0],
             t.cell[1], t.a, t.b, t.test.n, f"{t.test.acc_a:.3f}", f"{t.test.acc_b:.3f}",
             f"{t.test.diff:+.3f} [{t.test.ci95[0]:+.3f}, {t.test.ci95[1]:+.3f}]", t.test.only_a, t.test.only_b,
             f"{t.test.p:.3g}", f"{t.test.p_holm:.3g}", f"{t.p_table:.3g}"] for t in tests]
    return markdown_table([first, "Suite", "Condition", "A", "B", "n", "Acc A", "Acc B", "A − B [95% CI]", "A only",
                           "B only", "McNemar p", "Holm p (pair)", "Holm p (table)"], body)


def _method(extra: str = "") -> str:
    return (f"\n{DIRECTION}; 95% CI: {METHODS['ci95']}; McNemar p: exact. Holm p (pair): {PAIR_FAMILY}; "
            f"Holm p (table): {TABLE_FAMILY}.{extra}\n")


def _differs(t: Paired) -> str:
    return (f"{t.a} differs from {t.b} on {t.cell[0]} {t.cell[1]} (accuracy {t.test.acc_a:.2f} vs "
            f"{t.test.acc_b:.2f}, A − B {t.test.diff:+.2f}, McNemar p = {t.p_table:.3g} after Holm over the table)"
            + (f"; {some(t.between)} between them not measured, so the change may lie at any of them"
               if t.between else "") + ".")


def _chosen(study: Study) -> Drawn:
    """The comparisons the study file names (``compare:``)."""
    pairs = [Pair("chosen", a, b, c.name) for c in study.state.compare for a in c.a for b in c.b]
    if not pairs:
        return Drawn("The study file names no comparison (`compare: [[A, B], …]` by the models' study names).\n")
    tests, skipped = across.paired_tests(study.tables, pairs, seed=study.seed)
    missing = [f"{p.a} vs {p.b}" for p in pairs if not any(t.a == p.a and t.b == p.b for t in tests)]
    text = paired_table(tests, "Comparison") if tests else "No comparison could be tested.\n"
    text += _method(" Each row is the same test, with the same numbers, as `lingdiag compare A B` on the two runs.")
    text += "".join(f"\n- not tested: {s}" for s in skipped)
    text += "".join(f"\n- no cell both ran: {m}" for m in missing)
    return Drawn(text, found=[_differs(t) for t in tests if t.p_table < 0.05])


def _adjacent(study: Study) -> Drawn:
    """The paired tests between neighbours and the differences they support."""
    try:
        tests, skipped = across.adjacent(study.runs, study.missing, study.tables, seed=study.seed)
    except LingdiagError as e:
        return Drawn(f"Not tested: {e}\n")
    text = paired_table(tests, "Between") if tests else "No neighbouring sizes or checkpoints.\n"
    text += _method(" Neighbours: sizes of one family and checkpoints of one model, in order, among the runs "
                    "measured (a planned one between two of them that was not measured is named beside the kind); "
                    "A is the larger or later one, so A − B is what size or training changed.")
    return Drawn(text + "".join(f"\n- not tested: {s}" for s in skipped),
                 found=[_differs(t) for t in tests if t.p_table < 0.05])


def mixed_frame(runs: Sequence[StudyRun], seed: int = 0) -> tuple[object, str]:
    """The graded answers of ``runs`` as ``mixed.fit_frame``'s frame (item codes, not ids), sampled by item
    (seeded) to at most :data:`MIXED_RECORDS` answers before the frame is built; and a sentence naming the
    sample where one was drawn.
    """
    import pandas as pd

    graded = [s.summary.columns.outcome != NOT_GRADED for s in runs]
    total = int(sum(g.sum() for g in graded))
    keep = graded
    sampled = ""
    bound = int(MIXED_RECORDS.value)
    if total > bound:
        items = np.unique(np.concatenate([s.summary.columns.item[g] for s, g in zip(runs, graded, strict=True)]))
        n = max(int(len(items) * bound / total), 1)
        chosen = np.random.default_rng(seed).choice(items, size=n, replace=False)
        keep = [g & np.isin(s.summary.columns.item, chosen) for s, g in zip(runs, graded, strict=True)]
        answers = int(sum(k.sum() for k in keep))
        sampled = (f"Fitted on a seeded sample of {n} of {len(items)} items (seed {seed}; every model's answers on "
                   f"them: {answers} of {total}); {MIXED_RECORDS.how_to_raise()}.")
    parts = []
    for s, k in zip(runs, keep, strict=True):
        c = s.summary.columns
        parts.append(pd.DataFrame({"correct": (c.outcome[k] == RIGHT).astype(int),
                                   "condition": np.array(s.summary.vocab.conditions.names, dtype=object)[
                                       c.condition[k]],
                                   "item": c.item[k], "model": s.label}))
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["correct", "condition", "item",
                                                                                 "model"])
    return df, sampled


def _mixed(study: Study) -> Drawn:
    """``correct ~ condition + (1 | item) + (1 | model)`` per suite over every model."""
    parts = []
    for suite in dict.fromkeys(s.entry.suite for s in study.runs):
        members = [s for s in study.runs if s.entry.suite == suite]
        flags: dict[str, list[str]] = {}
        for s in members:
            for condition, why in s.summary.not_interpretable.items():
                flags.setdefault(condition, []).append(f"{s.label} {why}")
        df, sampled = mixed_frame(members, study.seed)
        try:
            fitted = mixed.fit_frame(df, None, {c: ", ".join(v) for c, v in flags.items()})
        except LingdiagError as e:
            parts.append(f"- {suite}: not fitted: {e}")
            continue
        rows = [[suite, e.condition, fitted.baseline, f"{e.estimate:+.3f}", f"{e.odds_ratio:.2f}",
                 f"[{e.ci95[0]:+.3f}, {e.ci95[1]:+.3f}]"] for e in fitted.effects]
        parts.append(markdown_table(["Suite", "Condition", "Baseline", "Log-odds", "Odds ratio", "95% CI"], rows)
                     + f"\n{fitted.formula}; {fitted.n} records, {fitted.n_items} items, {fitted.n_models} models."
                     + (f" {sampled}" if sampled else "") + "\n")
    return Drawn("\n".join(parts) + "\n" if parts else "No finished run to fit.\n")


def _items(study: Study) -> Drawn:
    """Per cell: each item's share of models right (the hardest first where there are more than
    :data:`ITEMS_SHOWN`), the items every model fails, the items that split families or sizes.
    """
    families = {s.label: s.entry.model.family for s in study.runs}
    sizes = {s.label: _size(s.entry.model.n_params) or s.label for s in study.runs}
    names = study.items
    parts, found = [], []
    for cell, table in study.tables.items():
        if len(table.models) < 2:
            continue
        shares = across.item_shares(table)
        rated = np.flatnonzero(shares.graded > 0)
        failed = rated[shares.right[rated] == 0]
        split = across.splits(table, families, "family") + across.splits(table, sizes, "size")
        found.append(f"{cell[0]} {cell[1]}: {len(failed)} of {len(rated)} items every model fails.")
        shown = rated if len(rated) <= ITEMS_SHOWN else \
            rated[np.argsort(shares.share[rated], kind="stable")[:ITEMS_SHOWN]]
        body = [[names[table.items[k]], int(shares.right[k]), int(shares.graded[k]), f"{shares.share[k]:.2f}",
                 some([m for j, m in enumerate(table.models) if table.outcome[k, j] == RIGHT], NAMES_SHOWN)]
                for k in shown]
        more = (f"\nThe {ITEMS_SHOWN} items the fewest models get right of {len(rated)}; `lingdiag view` shows "
                "every item across the models.\n") if len(rated) > len(shown) else ""
        listed = ", ".join(names[table.items[k]] for k in failed[:ITEMS_SHOWN]) or "none"
        parts.append(f"### Items across models: {cell[0]}, {cell[1]}\n\n"
                     + markdown_table(["Item", "Models right", "Models graded", "Share right", "Right"], body) + more
                     + f"\nItems every model fails ({len(failed)}): {listed}"
                     + (f" and {len(failed) - ITEMS_SHOWN} more" if len(failed) > ITEMS_SHOWN else "") + ".\n")
        if split:
            parts.append(f"### Items that split families or sizes: {cell[0]}, {cell[1]}\n\n" + markdown_table(
                ["Item", "By", "All right", "All wrong"],
                [[names[table.items[x.item]], x.by, x.right, x.wrong] for x in split[:ITEMS_SHOWN]])
                + (f"\n{len(split) - ITEMS_SHOWN} more items split them.\n" if len(split) > ITEMS_SHOWN else ""))
    return Drawn("\n".join(parts) or "Items across models need two models on a condition.\n", found=found)


def _irt(study: Study) -> Drawn:
    """The item model's section (``lingdiag.items.section``): it reads the done runs' records."""
    records = sum(len(s.summary.columns) for s in study.runs)
    if records > ITEM_FIT_RECORDS.value:
        text = (f"No item model here: the study holds {records} records; fit it with `lingdiag items fit "
                f"{study.directory.name} --out {study.directory.name}/items`. {ITEM_FIT_RECORDS.how_to_raise()}.")
        return Drawn(text + "\n")
    from lingdiag.items.matrix import answers_of, from_outcomes  # scipy: not at `lingdiag`'s start
    from lingdiag.items.section import study_section

    # The fit reads the summaries' outcomes (one byte per answer); one run per suite is read whole for the
    # items' text, gold and human ratings.
    where = {s.label: str(s.entry.directory(study.directory)) for s in study.runs}
    cells = [from_outcomes(cell[0], cell[1], t.models, [study.items[int(k)] for k in t.items], t.outcome,
                           [where[m] for m in t.models]) for cell, t in study.tables.items()]
    first = {s.entry.suite: s for s in reversed(study.runs)}
    done = study_section(study.directory, cells, [answers_of(s.entry.directory(study.directory))
                                                  for s in first.values()])
    return Drawn(done.text, html=done.html)


def _agreed(x: across.Agreement) -> str:
    """Kappa, then the raw agreement: ``0.41 (25/30)``."""
    return f"{'–' if x.kappa is None else f'{x.kappa:.2f}'} ({x.agree}/{x.n})"


def _shares(counts: Sequence[tuple[str, int]]) -> str:
    """``True 23 (58%), False 17 (42%)``: exact counts, with shares that sum to 100 (``whole_percents``)."""
    return ", ".join(f"{label} {n} ({pct}%)" for (label, n), pct in
                     zip(counts, whole_percents([n for _, n in counts]), strict=True))


def _agreement(study: Study) -> Drawn:
    """Per cell, pairwise Cohen's kappa beside the raw agreement, and each model's labels' prevalence."""
    parts = []
    for cell, table in study.tables.items():
        if len(table.models) < 2:
            continue
        shown = table if len(table.models) <= AGREEMENT_MODELS else across.CellTable(
            table.cell, table.models[:AGREEMENT_MODELS], table.items, table.outcome[:, :AGREEMENT_MODELS],
            table.label[:, :AGREEMENT_MODELS])
        k = across.agreement(shown)
        names = shown.models
        body = [[a, *(_agreed(k[(a, b)]) for b in names), _shares(across.prevalence(table, a, study.labels))]
                for a in names]
        parts.append(f"### Agreement: {cell[0]}, {cell[1]}\n\n" + markdown_table(["Model", *names, "Labels"], body)
                     + (f"\nThe first {AGREEMENT_MODELS} of {len(table.models)} models, in the study's order.\n"
                        if shown is not table else ""))
    note = ("\nEach cell: Cohen's kappa between two models' labels (UNPARSED is a label), then the raw agreement "
            "(items given the same label / items both answered without a backend error); – where chance "
            "agreement is total. Labels: each model's labels, the items each takes and their share (whole "
            "percents from the exact counts by largest remainder, so a row sums to 100%). Kappa is "
            "near 0 when one model gives nearly one label, however often the two agree: read it beside the raw "
            "agreement and the labels' prevalence.\n")
    return Drawn(("\n".join(parts) + note) if parts else "Agreement needs two models on a condition.\n")


def _competence(study: Study) -> Drawn:
    """Competence against performance per model, smallest model first, where a suite has both."""
    rows = [replace(r, model=s.label) for s in study.runs for r in s.run.rows]
    try:
        joined = competence.competence_performance(rows)
    except LingdiagError as e:
        return Drawn(f"Not joined: {e}\n")
    return Drawn(competence.to_markdown(joined) if joined else
                 "No suite of the study ran both a generated and a log-likelihood (competence) condition.\n")


def failures_text(rows: Sequence[GridRow], runs: Sequence[StudyRun], unreadable: Sequence[str]) -> str:
    """Runs not done (with why), runs that could not be read, and conditions not interpretable."""
    lines = [f"- {r.model} × {r.suite}: {r.status}, {r.items_done}/{r.items_total} items"
             + (f" ({r.reason})" if r.reason else "") for r in rows if r.status != "done"]
    lines += [f"- unreadable: {u}" for u in unreadable]
    lines += [f"- {s.label} × {s.entry.suite}, {c}: not interpretable ({why})"
              for s in runs for c, why in s.summary.not_interpretable.items()]
    lines += [f"- {s.label} × {s.entry.suite}: {n} item(s) failed in the backend"
              for s in runs if (n := int(s.summary.columns.error.sum()))]
    return "\n".join(lines) + "\n" if lines else "Every run finished and every condition is interpretable.\n"


def _failures(study: Study) -> Drawn:
    text = failures_text(study.grid, study.runs, study.unreadable)
    interpretable = text.startswith("Every run finished")
    return Drawn(text, found=[] if interpretable else
                 ["Some runs failed, are unfinished or not interpretable: see 'Not interpretable or failed'."])


@dataclass(frozen=True)
class StudySection:
    """One section of the study report: where it sits (:data:`SECTIONS` order), its title, how it is drawn."""

    anchor: str
    title: str
    draw: Callable[[Study], Drawn]


SECTIONS: list[StudySection] = [
    StudySection("study-grid", "Runs", _grid),
    StudySection("study-accuracy", "Models × conditions", _accuracy),
    StudySection("study-curves", "Learning curves", _curves),
    StudySection("study-compare", "Chosen comparisons", _chosen),
    StudySection("study-adjacent", "Adjacent sizes and checkpoints", _adjacent),
    StudySection("study-mixed", "Mixed model over all models", _mixed),
    StudySection("study-items", "Items across models", _items),
    StudySection("study-irt", "Items", _irt),
    StudySection("study-agreement", "Agreement between models", _agreement),
    StudySection("study-competence", "Competence and performance", _competence),
    StudySection("study-failed", "Not interpretable or failed", _failures),
]
"""The study report's sections after its findings, in order: a new section is one entry here."""


@dataclass(frozen=True)
class Section:
    """A section of the study report, put before the run report's sections: its markdown (escaped when
    rendered) and its figures (drawn as data URIs), in the run report's page shell.
    """

    anchor: str
    title: str
    text: str
    figures: Sequence[Figure] = field(default_factory=tuple)
    html: str = ""
    """The section's own HTML (every outside text escaped) where it is more than its markdown (links)."""

    def fragment(self) -> Fragment:
        """The section as the page shell takes it."""
        shown = "".join(figure_html(f, ()) for f in self.figures)
        inner = self.html or f'{markdown_to_html(self.text)}<div class="figures">{shown}</div>'
        return Fragment(wrap(escape(self.anchor), escape(self.title), inner), (Link(self.anchor, self.title),))


def findings(study: Study, drawn: Sequence[Drawn]) -> list[str]:
    """What the report says first: how many runs are done, then each section's findings in order."""
    done = sum(r.status == "done" for r in study.grid)
    found = [f"{done} of {len(study.grid)} runs done."]
    if study.missing:
        found.append(f"Planned but not measured, in no number below: {_missing_line(study.missing)}; why: see 'Runs'.")
    return [*found, *(f for d in drawn for f in d.found)]


def sections_of(study: Study) -> list[Section]:
    """The study report's sections, findings first."""
    drawn = [s.draw(study) for s in SECTIONS]
    here = [study.directory]  # what the study directory holds is named relative to it; no other path of this machine

    return [Section("study-findings", "Findings",
                    portable("\n".join(f"- {f}" for f in findings(study, drawn)) + "\n", here)),
            *(Section(s.anchor, s.title, portable(d.text, here), d.figures, portable(d.html, here))
              for s, d in zip(SECTIONS, drawn, strict=True))]


def sections(out: Path, *, seed: int = 0) -> tuple[list[Section], Study]:
    """The study report's sections, findings first, and the study they read."""
    study = load(out, seed=seed)
    return sections_of(study), study


def summary_text(study: Study, found: Sequence[Section]) -> str:
    """The report on a terminal: the findings, the runs per state and where the full report goes."""
    states: dict[str, int] = {}
    for r in study.grid:
        states[r.status] = states.get(r.status, 0) + 1
    return (f"{study.state.name}: " + ", ".join(f"{n} {s}" for s, n in states.items()) + "\n"
            + found[0].text
            + "The whole report: --html FILE (one page) and/or --tables DIR (study.md, study.tex); "
              "`lingdiag view DIR` browses it.\n")


def write_report(out: Path, html: Path | None = None, tables_dir: Path | None = None, *, seed: int = 0) -> list[Path]:
    """Write the HTML page and/or the Markdown and LaTeX tables of the study in ``out``; the files written."""
    if html is not None and Path(html).is_dir():
        raise ConfigError(f"--html {html}: a directory; give a file name such as {Path(html) / 'study.html'}")
    found, study = sections(out, seed=seed)
    written = []
    if html is not None:
        records = sum(len(s.summary.columns) for s in study.runs)
        leading = [s.fragment() for s in found]
        if records <= RUN_SECTIONS_RECORDS.value:
            loaded = [load_run(s.entry.directory(out)) for s in study.runs]
        else:
            loaded = []
            note = (f"The runs' own report sections are left out: the study holds {records} records (their item "
                    f"browser would carry every one in this page); `lingdiag view {out.name}` shows them. "
                    f"{RUN_SECTIONS_RECORDS.how_to_raise()}.")
            leading.append(Section("study-runs", "The runs' own sections", note + "\n").fragment())
        families = {s.run.model: s.entry.model.family for s in study.runs}
        make_dir(Path(html).parent)
        write_atomic(html, render_html(tables(loaded), loaded, families, leading,
                                       f"lingdiag study: {study.state.name}"))
        written.append(Path(html))
    if tables_dir is not None:
        make_dir(tables_dir)
        text = "\n".join(f"## {s.title}\n\n{s.text}" for s in found)
        for name, body in (("study.md", text), ("study.tex", markdown_to_latex(text))):
            write_atomic(Path(tables_dir) / name, body)
            written.append(Path(tables_dir) / name)
    return written
