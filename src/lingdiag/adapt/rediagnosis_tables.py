"""The re-diagnosis as files: a Markdown section, a CSV of every row, the sweep figures.

Every table is headed by the adapter it tests (its hash and rank/targets or layers/α) and the two
models' names, so base and adapted are told apart wherever the table goes. Model names,
conditions and paths come from runs: cells pass through ``markdown_table`` (``|`` and line
breaks escaped), headings through ``terminal.plain``, and CSV cells are neutralised.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from lingdiag.adapt.rediagnosis import MetricRow, Pairing, Rediagnosis
from lingdiag.analysis.compare import METHODS
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.markdown import markdown_table
from lingdiag.io.tabular import write_csv
from lingdiag.io.terminal import plain

CSV_NAME = "adapt_report.csv"
MARKDOWN_NAME = "adapt_report.md"
CSV_HEADER = ("suite", "adapter", "base_model", "adapted_model", "condition", "items", "metric", "n", "base",
              "base_ci_low", "base_ci_high", "adapted", "adapted_ci_low", "adapted_ci_high", "diff",
              "diff_ci_low", "diff_ci_high", "test", "p", "p_holm")
PARTS_NOTE = ("Items: `trained` = items whose lemma the adapter's training data used, `held-out` = items whose "
              "lemma was kept out of training, `all` = every paired item (the split recorded beside the adapter).")


def _value(x: float, ci: tuple[float, float] | None) -> str:
    if math.isnan(x):
        return "–"
    return f"{x:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _p(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.3g}"


def title(pairing: Pairing) -> str:
    """Which adapter, on which models, as a table's heading (one line, control characters escaped)."""
    return plain(f"{pairing.adapted.suite_title}: {pairing.adapter.label}: {pairing.adapted.model} "
                 f"(adapted, {pairing.adapted.path}) vs {pairing.base.model} (base, {pairing.base.path})")


def split_line(pairing: Pairing) -> str:
    """The lemma split the rows of ``pairing`` are divided by, in one line."""
    s = pairing.split
    if s is None:
        return "items: all (no lemma split: none recorded beside the adapter, or these records lack its tag)"
    return f"items split by {s.field}: {len(s.trained)} trained, {len(s.held_out)} held out"


def accuracy_table(rows: Sequence[MetricRow]) -> str:
    """Accuracy rows (McNemar and the paired bootstrap interval of the difference) as markdown."""
    return markdown_table(
        ["Condition", "Items", "N", "Base [95% CI]", "Adapted [95% CI]", "Adapted − base", "95% CI", "p",
         "p (Holm)"],
        [[r.condition, r.part, r.n, _value(r.base, r.base_ci), _value(r.adapted, r.adapted_ci), f"{r.diff:+.3f}",
          f"[{r.diff_ci[0]:+.3f}, {r.diff_ci[1]:+.3f}]" if r.diff_ci else "–", _p(r.p), _p(r.p_holm)]
         for r in rows])


def rates_table(rows: Sequence[MetricRow]) -> str:
    """Rate and gap rows (paired permutation) as markdown."""
    return markdown_table(
        ["Condition", "Items", "Metric", "N", "Base [95% CI]", "Adapted [95% CI]", "Adapted − base", "p",
         "p (Holm)"],
        [[r.condition, r.part, r.metric, r.n, _value(r.base, r.base_ci), _value(r.adapted, r.adapted_ci),
          "–" if math.isnan(r.diff) else f"{r.diff:+.3f}", _p(r.p), _p(r.p_holm)] for r in rows])


def markdown(result: Rediagnosis, figures: Sequence[str] = ()) -> str:
    """The re-diagnosis as a Markdown section.

    Args:
        result: What :func:`lingdiag.adapt.rediagnosis.rediagnose` computed.
        figures: File names of the sweep figures (beside the Markdown file), or notes why there are none.
    """
    primary = result.pairings[0].base.suite_title
    out = ["## Re-diagnosis after adaptation", "", PARTS_NOTE, ""]
    both = list(zip(result.pairings, result.tables, strict=True))
    own = [(p, t) for p, t in both if p.adapted.suite_title == primary]
    side = [(p, t) for p, t in both if p.adapted.suite_title != primary]
    for heading, pairings in ((f"### {primary}", own), ("### Side effects on other suites", side)):
        if not pairings:
            continue
        out += [heading, ""]
        for p, rows in pairings:
            acc = [r for r in rows if r.test == "McNemar"]
            rates = [r for r in rows if r.test != "McNemar"]
            out += [f"#### Accuracy: {title(p)}", "", split_line(p), "", accuracy_table(acc)]
            if rates:
                out += [f"#### Rates and gaps: {title(p)}", "", rates_table(rates)]
    if result.sweep:
        out += ["### Steering sweep", ""]
        for vector, points in result.sweep.items():
            out += [f"#### {result.headline} against α: vector {plain(vector)}", "", markdown_table(
                ["α", "Condition", f"{result.headline} [95% CI]", "Answers by label"],
                [[f"{p.alpha:g}", p.condition, _value(p.headline, p.headline_ci),
                  ", ".join(f"{k} {v:.2f}" for k, v in p.shares.items())] for p in points])]
        out += [f"![steering sweep]({f})" if f.endswith(".png") else f for f in figures] + [""]
    out.append("Methods: " + "; ".join(f"{k}: {v}" for k, v in METHODS.items()) +
               "; intervals of a value: Wilson (accuracy) or the suite's own; Holm within each table.")
    return "\n".join(out) + "\n"


def _cells(r: MetricRow) -> list[object]:
    def pair(ci: tuple[float, float] | None) -> list[object]:
        return list(ci) if ci else ["", ""]

    return [r.suite, r.adapter, r.base_model, r.adapted_model, r.condition, r.part, r.metric, r.n, r.base,
            *pair(r.base_ci), r.adapted, *pair(r.adapted_ci), r.diff, *pair(r.diff_ci), r.test, r.p, r.p_holm]


def write_outputs(directory: Path, result: Rediagnosis) -> list[Path]:
    """Write the CSV, the sweep figures (with matplotlib, the ``plots`` extra) and the Markdown section.

    Returns:
        The paths written.
    """
    from lingdiag import figures as figs

    make_dir(directory)
    written = [directory / CSV_NAME]
    write_csv(written[0], CSV_HEADER, [_cells(r) for r in result.rows])
    names = []
    if result.sweep and not figs.available():
        names.append("(sweep figure: needs matplotlib: pip install 'lingdiag[plots]')")
    elif result.sweep:
        from lingdiag.adapt.sweep_figure import sweep_figure

        for k, (vector, points) in enumerate(result.sweep.items(), 1):
            path = directory / f"steering_sweep_{k}.png"
            write_atomic(path, sweep_figure(vector, points, result.headline).png)
            names.append(path.name)
            written.append(path)
    write_atomic(directory / MARKDOWN_NAME, markdown(result, names))
    return [*written, directory / MARKDOWN_NAME]

