"""``study report``: the study's own sections (findings, the grid, models × conditions, learning
curves, adjacent tests, the mixed model, items across models, agreement, competence against
performance, what failed) as Markdown, laid out before the run report's summary by
``lingdiag.report.html`` (one page shell, one escaping), and written as Markdown and LaTeX tables.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path

from lingdiag import figures as figs
from lingdiag.analysis import competence, mixed
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.figures import Figure
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.markdown import markdown_table
from lingdiag.items.section import study_section
from lingdiag.reading import load_run
from lingdiag.records import UNPARSED
from lingdiag.report.export import markdown_to_latex
from lingdiag.report.findings import degenerate
from lingdiag.report.html import render_html
from lingdiag.report.markup import figure_html, markdown_to_html
from lingdiag.report.sections import Fragment, Link, wrap
from lingdiag.report.tables import tables
from lingdiag.rundir.study import StudyState, read_state
from lingdiag.study import across
from lingdiag.study.across import ONSET_RULE, Missing, StudyRun
from lingdiag.study.status import GridRow, grid


def load(out: Path) -> tuple[StudyState, list[GridRow], list[StudyRun], list[str]]:
    """The study's state, grid, done runs read back, and the done runs that could not be read (why).

    Only runs the grid calls done (finished, every item answered, current: ``lingdiag.rundir.state``) are
    read; the others are listed with their state, never reported as current numbers.
    """
    state = read_state(out)
    assert state is not None
    rows = grid(out, state)
    done = {r.key for r in rows if r.status == "done"}
    runs, unreadable = [], []
    for entry in state.runs:
        if entry.key not in done:
            continue
        try:
            loaded = load_run(entry.directory(out))
        except LingdiagError as e:
            unreadable.append(f"{entry.name}: {e}")
            continue
        labels = loaded.suite.labels
        runs.append(StudyRun(entry, loaded, 1 / len(labels) if labels else 0.5))  # minimal pairs: 2 ways
    return state, rows, runs, unreadable


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


def some(names: Sequence[str]) -> str:
    """``names`` joined, the first ``NAMED`` of them and how many more."""
    more = len(names) - NAMED
    return ", ".join(names[:NAMED]) + (f" and {more} more" if more > 0 else "")


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


def accuracy_text(runs: Sequence[StudyRun]) -> str:
    """Models × conditions: accuracy with its 95% interval, and per language where items carry one."""
    body, languages = [], []
    for s in runs:
        m = s.entry.model
        for cell, models in across.cells([s]).items():
            records = models[s.label]
            a = across.accuracy(records)
            unparsed = sum(r.label == UNPARSED and r.error is None for r in records)
            body.append([cell[0], cell[1], m.label, m.family, _size(m.n_params), f"{a.value:.3f}", _ci(a), a.n,
                         unparsed, sum(r.error is not None for r in records)])
            for lang in sorted({r.tags.get("language", "") for r in records} - {""}):
                la = across.accuracy([r for r in records if r.tags.get("language") == lang])
                languages.append([cell[0], cell[1], m.label, lang, f"{la.value:.3f}", _ci(la), la.n])
    text = markdown_table(["Suite", "Condition", "Model", "Family", "Size", "Accuracy", "95% CI", "n", "Unparsed",
                           "Errors"], body)
    text += ("\nAccuracy: right / graded (an unparsed answer is wrong; an item the backend failed on is left "
             "out and counted under Errors); 95% CI: Wilson.\n")
    if languages:
        text += "\n### Per language\n\n" + markdown_table(
            ["Suite", "Condition", "Model", "Language", "Accuracy", "95% CI", "n"], languages)
    return text


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


def curves_text(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> tuple[str, list[str]]:
    """The learning-curve tables (checkpoints not measured among them, with why) and the findings they
    support (:func:`_onset_sentence`).
    """
    parts, found = [], []
    curves = across.learning_curves(runs, missing)
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
    for (model, suite), gone in _grouped(g for g in missing if g.entry.model.base is not None).items():
        if (model, suite) not in drawn:
            found.append(f"Learning curve of {model} on {suite}: no checkpoint measured ({_missing_line(gone)}).")
            parts.append(f"### {model}: {suite}\n\n{found[-1]}\n")
    if not parts:
        return "No model of the study has checkpoints.\n", found
    return "\n".join(parts) + f"\nRule: {ONSET_RULE}.\n", found


def _grouped(missing: Iterable[Missing]) -> dict[tuple[str, str], list[Missing]]:
    """(model a checkpoint belongs to, suite) → its checkpoints not measured."""
    out: dict[tuple[str, str], list[Missing]] = defaultdict(list)
    for g in missing:
        out[(str(g.entry.model.base), g.entry.suite)].append(g)
    return dict(out)


def curve_figures(runs: Sequence[StudyRun], missing: Sequence[Missing] = ()) -> list[Figure]:
    """Accuracy against step (or tokens) per model with checkpoints: one line per cell, 95% bars; a
    checkpoint not measured breaks the line and is marked where it would sit, and named in the caption.
    """
    curves = across.learning_curves(runs, missing)
    if not curves or not figs.available():
        return []
    plt = figs.pyplot()
    out = []
    for model in dict.fromkeys(m for m, _ in curves):
        fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
        gaps: dict[str, tuple[float, str]] = {}
        for (m, cell), points in curves.items():
            if m != model:
                continue
            xs = [p.step if p.step is not None else (p.tokens or 0.0) for p in points]
            ys = [math.nan if p.missing else p.accuracy.value for p in points]  # NaN: the line breaks there
            err = [[0.0 if p.missing else y - p.accuracy.ci95[0] for y, p in zip(ys, points, strict=True)],
                   [0.0 if p.missing else p.accuracy.ci95[1] - y for y, p in zip(ys, points, strict=True)]]
            ax.errorbar(xs, ys, yerr=err, fmt="-o", capsize=3, label=f"{cell[0]} {cell[1]}")
            gaps.update({f"{p.checkpoint} ({p.missing})": (x, p.checkpoint)  # the tables say which cell
                         for x, p in zip(xs, points, strict=True) if p.missing})
        marks = dict.fromkeys(gaps.values())
        for x, name in marks:
            ax.axvline(x, color="#999", linestyle=":", linewidth=1)
            if len(marks) <= NAMED:  # more names than that would cover the curve: the caption counts them
                ax.annotate(f"{name}: not measured", (x, 0.02), xycoords=("data", "axes fraction"), rotation=90,
                            fontsize=6, color="#666", va="bottom", ha="right")
        ax.set_xlabel("training step (tokens where no step is given)")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=6)
        caption = "Accuracy at each checkpoint; bars: 95% Wilson intervals."
        if gaps:
            caption += f" Not measured (dotted, the line broken there): {some(list(gaps))}."
        out.append(Figure(f"{model}: learning curve", figs.to_png(fig), caption))
    return out


def adjacent_text(runs: Sequence[StudyRun], seed: int = 0, missing: Sequence[Missing] = ()) -> tuple[str, list[str]]:
    """The paired tests between neighbours (with the planned models between them not measured) and the
    differences they support.
    """
    try:
        tests, skipped = across.adjacent(runs, missing, seed=seed)
    except LingdiagError as e:
        return f"Not tested: {e}\n", []

    def kind(t: across.Adjacent) -> str:
        return t.kind + (f" (not measured between: {some(t.between)})" if t.between else "")

    body = [[t.cell[0], t.cell[1], kind(t), t.a, t.b, t.test.n, f"{t.test.acc_a:.3f}", f"{t.test.acc_b:.3f}",
             f"{-t.test.diff:+.3f} [{-t.test.ci95[1]:+.3f}, {-t.test.ci95[0]:+.3f}]", f"{t.test.p:.3g}",
             f"{t.test.p_holm:.3g}"] for t in tests]
    found = [f"{t.b} differs from {t.a} on {t.cell[0]} {t.cell[1]} (accuracy {t.test.acc_b:.2f} vs "
             f"{t.test.acc_a:.2f}, McNemar p = {t.test.p_holm:.3g} after Holm)"
             + (f"; {some(t.between)} between them not measured, so the change may lie at any of them"
                if t.between else "") + "." for t in tests if t.test.p_holm < 0.05]
    text = markdown_table(["Suite", "Condition", "Between", "A", "B", "n", "Acc A", "Acc B", "B − A [95% CI]",
                           "McNemar p", "Holm p"], body) if body else "No neighbouring sizes or checkpoints.\n"
    text += ("\nNeighbours: sizes of one family in order, and checkpoints of one model in order, among the runs "
             "measured (a planned one between two of them that was not measured is named in Between); exact "
             "McNemar on the items both graded, Holm over every row. B − A interval: paired bootstrap.\n")
    return text + "".join(f"\n- not tested: {s}" for s in skipped), found


def mixed_text(runs: Sequence[StudyRun]) -> str:
    """``correct ~ condition + (1 | item) + (1 | model)`` per suite over every model."""
    parts = []
    for suite in dict.fromkeys(s.entry.suite for s in runs):
        records = {s.label: s.run.records for s in runs if s.entry.suite == suite}
        try:
            fitted = mixed.fit(records)
        except LingdiagError as e:
            parts.append(f"- {suite}: not fitted: {e}")
            continue
        rows = [[suite, e.condition, fitted.baseline, f"{e.estimate:+.3f}", f"{e.odds_ratio:.2f}",
                 f"[{e.ci95[0]:+.3f}, {e.ci95[1]:+.3f}]"] for e in fitted.effects]
        parts.append(markdown_table(["Suite", "Condition", "Baseline", "Log-odds", "Odds ratio", "95% CI"], rows)
                     + f"\n{fitted.formula}; {fitted.n} records, {fitted.n_items} items, {fitted.n_models} models.\n")
    return "\n".join(parts) + "\n" if parts else "No finished run to fit.\n"


def items_text(runs: Sequence[StudyRun]) -> tuple[str, list[str]]:
    """Per cell: each item's share of models right, the items every model fails, the items that
    split families or sizes.
    """
    families = {s.label: s.entry.model.family for s in runs}
    sizes = {s.label: _size(s.entry.model.n_params) or s.label for s in runs}
    parts, found = [], []
    for cell, models in across.cells(runs).items():
        if len(models) < 2:
            continue
        shares = across.item_shares(models)
        failed = [x.item_id for x in shares if not x.right]
        split = across.splits(shares, families, "family") + across.splits(shares, sizes, "size")
        found.append(f"{cell[0]} {cell[1]}: {len(failed)} of {len(shares)} items every model fails.")
        body = [[x.item_id, len(x.right), len(x.right) + len(x.wrong), f"{x.share:.2f}", ", ".join(x.right)]
                for x in shares]
        parts.append(f"### Items across models: {cell[0]}, {cell[1]}\n\n"
                     + markdown_table(["Item", "Models right", "Models graded", "Share right", "Right"], body)
                     + f"\nItems every model fails ({len(failed)}): {', '.join(failed) or 'none'}.\n")
        if split:
            parts.append(f"### Items that split families or sizes: {cell[0]}, {cell[1]}\n\n" + markdown_table(
                ["Item", "By", "All right", "All wrong"], [[x.item_id, x.by, x.right, x.wrong] for x in split]))
    return ("\n".join(parts) or "Items across models need two models on a condition.\n"), found


def agreement_text(runs: Sequence[StudyRun]) -> str:
    """Per cell, the matrix of pairwise Cohen's kappa between the models' labels."""
    parts = []
    for cell, models in across.cells(runs).items():
        if len(models) < 2:
            continue
        k = across.agreement(models)
        names = list(models)
        body = [[a, *("–" if k[(a, b)][0] is None else f"{k[(a, b)][0]:.2f}" for b in names)] for a in names]
        parts.append(f"### Agreement: {cell[0]}, {cell[1]}\n\n" + markdown_table(["Model", *names], body))
    note = ("\nCohen's kappa between two models' labels (UNPARSED is a label) over the items both answered "
            "without a backend error; – where chance agreement is total.\n")
    return ("\n".join(parts) + note) if parts else "Agreement needs two models on a condition.\n"


def competence_text(runs: Sequence[StudyRun]) -> str:
    """Competence against performance per model, smallest model first, where a suite has both."""
    ordered = sorted(runs, key=lambda s: (s.entry.model.family, s.entry.model.n_params or 0.0,
                                          s.entry.model.step or 0))
    rows = [replace(r, model=s.label) for s in ordered for r in s.run.rows]
    try:
        joined = competence.competence_performance(rows)
    except LingdiagError as e:
        return f"Not joined: {e}\n"
    return competence.to_markdown(joined) if joined else \
        "No suite of the study ran both a generated and a log-likelihood (competence) condition.\n"


def failures_text(rows: Sequence[GridRow], runs: Sequence[StudyRun], unreadable: Sequence[str]) -> str:
    """Runs not done (with why), runs that could not be read, and conditions not interpretable."""
    lines = [f"- {r.model} × {r.suite}: {r.status}, {r.items_done}/{r.items_total} items"
             + (f" ({r.reason})" if r.reason else "") for r in rows if r.status != "done"]
    lines += [f"- unreadable: {u}" for u in unreadable]
    lines += [f"- {d.model} × {d.suite}, {d.condition}: not interpretable ({d.reason})"
              for d in degenerate([s.run for s in runs])]
    lines += [f"- {s.label} × {s.entry.suite}: {n} item(s) failed in the backend"
              for s in runs if (n := sum(r.error is not None for r in s.run.records))]
    return "\n".join(lines) + "\n" if lines else "Every run finished and every condition is interpretable.\n"


@dataclass(frozen=True)
class Section:
    """A section of the study report, put before the run report's sections: its markdown (escaped when
    rendered) and its figures (drawn as data URIs), in the run report's page shell.
    """

    anchor: str
    title: str
    text: str
    figures: Sequence[Figure] = ()
    html: str = ""
    """The section's own HTML (every outside text escaped) where it is more than its markdown (links)."""

    def fragment(self) -> Fragment:
        """The section as the page shell takes it."""
        shown = "".join(figure_html(f, ()) for f in self.figures)
        inner = self.html or f'{markdown_to_html(self.text)}<div class="figures">{shown}</div>'
        return Fragment(wrap(escape(self.anchor), escape(self.title), inner), (Link(self.anchor, self.title),))


def sections(out: Path, *, seed: int = 0) -> tuple[list[Section], list[StudyRun]]:
    """The study report's sections, findings first, and the runs they read."""
    state, rows, runs, unreadable = load(out)
    missing = unmeasured(state, rows, runs)
    curves, curve_found = curves_text(runs, missing)
    paired_text, paired_found = adjacent_text(runs, seed, missing)
    items, items_found = items_text(runs)
    failures = failures_text(rows, runs, unreadable)
    done = sum(r.status == "done" for r in rows)
    found = [f"{done} of {len(rows)} runs done."]
    if missing:
        found.append(f"Planned but not measured, in no number below: {_missing_line(missing)}; why: see 'Runs'.")
    found += curve_found + paired_found + items_found
    if "Every run finished" not in failures:
        found.append("Some runs failed, are unfinished or not interpretable: see 'Not interpretable or failed'.")
    return [
        Section("study-findings", "Findings", "\n".join(f"- {f}" for f in found) + "\n"),
        Section("study-grid", "Runs", grid_text(rows)),
        Section("study-accuracy", "Models × conditions", accuracy_text(runs)),
        Section("study-curves", "Learning curves", curves, curve_figures(runs, missing)),
        Section("study-adjacent", "Adjacent sizes and checkpoints", paired_text),
        Section("study-mixed", "Mixed model over all models", mixed_text(runs)),
        Section("study-items", "Items across models", items),
        Section(**vars(study_section(out, [s.run for s in runs]))),
        Section("study-agreement", "Agreement between models", agreement_text(runs)),
        Section("study-competence", "Competence and performance", competence_text(runs)),
        Section("study-failed", "Not interpretable or failed", failures),
    ], runs


def write_report(out: Path, html: Path | None = None, tables_dir: Path | None = None, *, seed: int = 0) -> list[Path]:
    """Write the HTML page and/or the Markdown and LaTeX tables of the study in ``out``; the files written."""
    found, runs = sections(out, seed=seed)
    state = read_state(out)
    assert state is not None
    written = []
    if html is not None:
        if Path(html).is_dir():
            raise ConfigError(f"--html {html}: a directory; give a file name such as {Path(html) / 'study.html'}")
        loaded = [s.run for s in runs]
        families = {s.run.model: s.entry.model.family for s in runs}
        make_dir(Path(html).parent)
        write_atomic(html, render_html(tables(loaded), loaded, families, [s.fragment() for s in found],
                                           f"lingdiag study: {state.name}"))
        written.append(Path(html))
    if tables_dir is not None:
        make_dir(tables_dir)
        text = "\n".join(f"## {s.title}\n\n{s.text}" for s in found)
        for name, body in (("study.md", text), ("study.tex", markdown_to_latex(text))):
            write_atomic(Path(tables_dir) / name, body)
            written.append(Path(tables_dir) / name)
    return written
