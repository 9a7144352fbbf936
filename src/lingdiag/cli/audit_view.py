"""Printing an ``AuditReport`` for ``lingdiag data audit``."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from lingdiag.audit import BINS, AuditReport
from lingdiag.cli.app import out
from lingdiag.io.markdown import fmt
from lingdiag.io.tabular import write_csv


def _p(x: float) -> str:
    return f"{x:.3g}"


def print_audit(r: AuditReport) -> None:
    """The report as rich tables, verdicts last in each."""
    out.print(f"{r.dataset}: {r.n_items} items by {r.class_by}: "
              + ", ".join(f"{c} {n}" for c, n in r.classes.items()))
    if r.association:
        out.print(f"lexical association: lemmatizer {r.lemmatizer}, corpus {r.corpus} ({r.corpus_units} units)")
        t = Table("measure", "class", "n", "unscored", "mean", "median")
        for m, by in r.association.items():
            for c, s in by.items():
                t.add_row(m, c, fmt(s["n"]), fmt(s["n_unscored"]), fmt(s["mean"], 3), fmt(s["median"], 3))
        out.print(t)
        t = Table("measure", "test", "statistic", "p", "p (Holm)", "effect", "verdict")
        for o in r.omnibus:
            t.add_row(o.measure, "Kruskal-Wallis, all classes", f"H={o.h:.2f}", _p(o.p), "",
                      f"ε²={o.epsilon_squared:.3f}", o.verdict)
        for p in r.pairs:
            t.add_row(p.measure, f"Mann-Whitney {p.a} vs {p.b}", f"U={p.u:.0f}", _p(p.p), _p(p.p_holm),
                      f"r={p.rank_biserial:+.3f}", p.verdict)
        out.print(t)
    lex = r.lexical
    if lex is not None:
        q = ", ".join(f"{x:.3g}" for x in lex.quartiles)
        out.print(f"lexical frequency ({lex.source}, lemmatizer {r.lemmatizer}): items binned at quartiles {q}"
                  f"{f'; {lex.unscored} items without a content word' if lex.unscored else ''}")
        classes = list(next(iter(lex.items.values())))
        t = Table("bin (items)", *classes)
        for b in BINS:
            t.add_row(b, *(str(lex.items[b][c]) for c in classes))
        out.print(t)
        out.print(f"class × bin: χ²={lex.test.chi2:.2f}, dof {lex.test.dof}, p={lex.test.p:.4g}, "
                  f"Cramér's V={lex.test.cramers_v:.3f}: {lex.test.verdict}")
    f = r.frequency
    if f is not None:
        q = ", ".join(f"{x:g}" for x in f.quartiles)
        out.print(f"frequency bins of {f.n_rows} rows from {f.source} (quartiles {q}; "
                  f"{f.unmatched_rows} rows unmatched, {f.items_without_rows} items without rows)")
        classes = list(next(iter(f.rows.values())))
        for title, table in (("rows", f.rows), ("items", f.items)):
            t = Table(f"bin ({title})", *classes)
            for b in BINS:
                t.add_row(b, *(str(table[b][c]) for c in classes))
            out.print(t)
        bt = f.rows_test
        out.print(f"class × bin (rows): χ²={bt.chi2:.2f}, dof {bt.dof}, p={bt.p:.4g}, Cramér's V={bt.cramers_v:.3f}: "
                  f"{bt.verdict}")
        if f.published_agreement:
            agree, n = f.published_agreement
            out.print(f"recomputed bins equal the file's own bins on {agree} of {n} rows")


def write_item_scores(r: AuditReport, path: Path) -> None:
    """One CSV row per item: id, class, mean PMI and LMI, lemma pairs and scored pairs."""
    write_csv(path, ["id", "class", "pmi", "lmi", "n_pairs", "n_scored"],
              ([s.item_id, s.label, "" if s.pmi is None else f"{s.pmi:.6f}", "" if s.lmi is None else f"{s.lmi:.6f}",
                s.n_pairs, s.n_scored] for s in r.items))
