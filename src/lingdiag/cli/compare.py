"""``lingdiag compare`` (paired tests between runs or conditions) and ``lingdiag mixed`` (a mixed-effects
regression over runs).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from lingdiag.analysis import competence as competence_join
from lingdiag.analysis.compare import (
    METHODS,
    Comparison,
    PermutationTest,
    compare_conditions,
    compare_runs,
    permute_conditions,
    permute_runs,
)
from lingdiag.analysis.mixed import fit, load
from lingdiag.cli.app import app
from lingdiag.cli.options import RESULTS, Json, Partial, Seed
from lingdiag.errors import ConfigError
from lingdiag.io.markdown import markdown_table
from lingdiag.io.terminal import plain, plain_lines
from lingdiag.reading import Vocabularies, load_runs, summarize
from lingdiag.reading.door import FINAL, PARTIAL, Accepted, accepted, marks_note
from lingdiag.records import dumps


@app.command(rich_help_panel=RESULTS)
def competence(
    runs: Annotated[list[Path], typer.Argument(help="Run directories with --scoring generate,loglik.")],
    seed: Seed = 0,
    partial: Partial = False,
    as_json: Json = False,
) -> None:
    """Competence (label log-likelihood) against performance (generated label), paired per item."""
    let_in = accepted(runs, PARTIAL if partial else FINAL)
    by_suite: dict[str, list[competence_join.CompetenceJoin]] = {}
    for run in load_runs([r.path for r in let_in]):
        join = run.suite.competence
        joined: list[competence_join.CompetenceJoin] = list(join(run.model, run.records, seed=seed)) if join else []
        by_suite.setdefault(run.suite_title, []).extend(joined)
    if not any(by_suite.values()):
        raise ConfigError(f"{', '.join(map(str, runs))}: no run holds a loglik condition and its prompted twin "
                          "(run ImperfectiveNLI or CxNLI with --scoring generate,loglik, ExpliCa with "
                          "--task ...,perplexity)")
    if as_json:
        print(dumps([{"suite": s, **asdict(j)} for s, js in by_suite.items() for j in js], indent=2, sort_keys=True))
        return
    print(plain_lines(marks_note(let_in) + "\n".join(competence_join.to_markdown(js, s)
                                                      for s, js in by_suite.items() if js)))



@app.command(rich_help_panel=RESULTS)
def compare(
    runs: Annotated[list[Path], typer.Argument(help="RUN_A RUN_B, or one RUN with --between.")],
    between: Annotated[tuple[str, str] | None, typer.Option(help="Two conditions of one run.")] = None,
    seed: Seed = 0,
    skip_uninterpretable: Annotated[bool, typer.Option(
        help="Leave conditions the report greys out as not interpretable (on either side) out of the tests "
             "and of Holm's correction.")] = False,
    partial: Partial = False,
    as_json: Json = False,
) -> None:
    """Paired tests on the same items: exact McNemar, bootstrap 95% interval of the accuracy
    difference, Holm over the table; the suite's rates and gaps by paired permutation, Holm over
    that table. Conditions the report calls not interpretable (half unparsed or failed, or one
    label for every item) are flagged in a Note column, or skipped with --skip-uninterpretable.
    """
    let_in = accepted(runs, PARTIAL if partial else FINAL)
    if between is not None:
        if len(runs) != 1:
            raise ConfigError("--between compares two conditions of ONE run")
        reasons = not_interpretable(runs[0])
        why = "; ".join(f"{c}: {reasons[c]}" for c in between if c in reasons)
        flags = {f"{between[0]} vs {between[1]}": why} if why else {}
        skip = flags if skip_uninterpretable else {}
        rows = [] if skip else compare_conditions(runs[0], *between, seed=seed)
        perms = [] if skip else permute_conditions(runs[0], *between, seed=seed)
    elif len(runs) == 2:
        flags = flagged({"A": not_interpretable(runs[0]), "B": not_interpretable(runs[1])})
        skip = flags if skip_uninterpretable else {}
        rows = compare_runs(runs[0], runs[1], seed=seed, skip=skip)
        perms = permute_runs(runs[0], runs[1], seed=seed, skip=skip)
    else:
        raise ConfigError(f"expected two runs (or one with --between), got {len(runs)}")
    _print_comparison(runs, between, let_in, rows, perms, flags, skip, seed, as_json)


def _print_comparison(runs: list[Path], between: tuple[str, str] | None, let_in: list[Accepted],
                      rows: list[Comparison], perms: list[PermutationTest], flags: dict[str, str],
                      skip: dict[str, str], seed: int, as_json: bool) -> None:
    """``compare``'s tables (or its JSON), the runs not final marked above them."""
    if as_json:
        print(dumps({"rows": [asdict(r) for r in rows], "permutation": [asdict(t) for t in perms],
                     "not_interpretable": flags, "skipped": sorted(skip), "methods": METHODS, "seed": seed,
                     "not_final": {str(r.path): r.mark for r in let_in if r.mark}},
                    indent=2))
        return
    print(plain(f"A = {runs[0]}" + ("" if between else f", B = {runs[1]}")))
    print(plain_lines(marks_note(let_in, ["A", "B"][:len(let_in)])), end="")

    def note(condition: str) -> str:
        return f"not interpretable: {flags[condition]}" if condition in flags else ""

    print(plain_lines(markdown_table(
        ["Condition", "N", "Acc A", "Acc B", "A − B", "95% CI", "A only", "B only", "p", "p (Holm)", "Note"],
        [[r.condition, r.n, r.acc_a, r.acc_b, r.diff, f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]", r.only_a, r.only_b,
          f"{r.p:.3g}", f"{r.p_holm:.3g}", note(r.condition)] for r in rows])))
    if perms:
        print("\nRates and gaps\n")
        print(plain_lines(markdown_table(
            ["Condition", "Metric", "N", "A", "B", "A − B", "Permutations", "p", "p (Holm)", "Note"],
            [[t.condition, t.metric, t.n, t.a, t.b, f"{t.diff:+.3f}", f"{t.permutations} (exact)" if t.exact
              else t.permutations, f"{t.p:.3g}", f"{t.p_holm:.3g}", note(t.condition)] for t in perms])))
    if skip:
        print()
        print(plain("Skipped as not interpretable (as the report greys them out): "
                    + "; ".join(f"{c}: {why}" for c, why in skip.items())))
    elif flags:
        print()
        print(plain("Not interpretable rows (half unparsed or failed, or one label for every item) measure the "
                    "parser or a constant answer; --skip-uninterpretable leaves them out of the tests and Holm."))
    print("; ".join(f"{k}: {v}" for k, v in METHODS.items()) + f"; seed {seed}")




def not_interpretable(run: Path) -> dict[str, str]:
    """Condition → why it is not interpretable, as the run's summary says (the report's rule)."""
    return summarize(run, Vocabularies()).not_interpretable


def flagged(sides: dict[str, dict[str, str]]) -> dict[str, str]:
    """Condition → ``A: reason; B: reason`` for the conditions not interpretable on some side."""
    out: dict[str, list[str]] = {}
    for side, reasons in sides.items():
        for condition, why in reasons.items():
            out.setdefault(condition, []).append(f"{side}: {why}")
    return {c: "; ".join(parts) for c, parts in out.items()}


@app.command(rich_help_panel=RESULTS)
def mixed(
    runs: Annotated[list[Path], typer.Argument(help="Runs of one suite (several models share its conditions).")],
    baseline: Annotated[str | None, typer.Option(help="Reference condition (default: the first).")] = None,
    partial: Partial = False,
    as_json: Json = False,
) -> None:
    """Mixed-effects logistic regression: correct ~ condition + (1 | item) + (1 | model)."""
    let_in = accepted(runs, PARTIAL if partial else FINAL)
    result = fit(load([r.path for r in let_in]), baseline)
    if as_json:
        print(dumps(asdict(result) | {"not_final": {str(r.path): r.mark for r in let_in if r.mark}}, indent=2))
        return
    print(plain_lines(marks_note(let_in)), end="")
    print(f"{result.formula}: {result.n} answers, {result.n_items} items, {result.n_models} model(s); "
          f"baseline {result.baseline} (intercept {result.intercept:+.3f} log-odds)")
    print(plain_lines(markdown_table(
        ["Condition", "Log-odds vs baseline", "SD", "95% interval", "Odds ratio", "Note"],
        [[e.condition, f"{e.estimate:+.3f}", f"{e.sd:.3f}", f"[{e.ci95[0]:+.3f}, {e.ci95[1]:+.3f}]",
          f"{e.odds_ratio:.2f}", result.note(e.condition)] for e in result.effects])))
    if result.not_interpretable:
        print(plain("An effect marked not interpretable (at least half unparsed or failed, or one label for every "
                    "item, in its condition or the baseline) measures the parser or a constant answer."))
    print("random intercept SD: " + ", ".join(f"{k} {v:.3f}" for k, v in result.random_sd.items()))
    print(result.method)
