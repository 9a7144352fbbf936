"""SyntaxGym's prediction formulas: parsed by a grammar, evaluated over region surprisals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.prompts.formulas import FormulaError, parse

S = {("1", "a"): 3.0, ("1", "b"): 1.0, ("2", "a"): 1.0, ("2", "b"): 0.0, ("*", "a"): 4.0, ("*", "b"): 1.0}


@pytest.mark.parametrize(("formula", "holds"), [
    ("(1;%a%) > (1;%b%)", True),
    ("(1;%a%) < (1;%b%)", False),
    ("[(1;%a%) > (1;%b%)] & [(2;%a%) < (2;%b%)]", False),
    ("[(1;%a%) > (1;%b%)] | [(2;%a%) < (2;%b%)]", True),
    ("[(1;%a%) - (1;%b%)] > [(2;%a%) - (2;%b%)]", True),
    ("(1;%a%) + (2;%a%) = (*;%a%)", True),
    ("(2;%a%) = 1.0009", True),  # SyntaxGym's absolute tolerance, 1e-3
    ("(2;%a%) = 1.002", False),
    ("(1;%a%)>(1;%b%)&(2;%a%)>(2;%b%)", True),  # & binds looser than comparisons
    ("[[(1;%a%) > 2] & [(2;%b%) < 1]] | (1;%b%) > 5", True),
])
def test_evaluates(formula: str, holds: bool) -> None:
    assert parse(formula)(S) is holds


@pytest.mark.parametrize(("formula", "position", "message"), [
    ("(1;%a%) <", 10, "expected a region, a number or '\\[', found the end"),
    ("[(1;%a%) < (1;%b%)", 19, "expected '\\]' to close the '\\[' at character 1"),
    ("(1;%a%) & (1;%b%)", 9, "'&' takes two comparisons, got a number and a number"),
    ("[(1;%a%) < 2] + 1 > 0", 15, "'\\+' takes two numbers, got a truth and a number"),
    ("(1;%a%) + 3", 1, "must compare surprisals"),
    ("__import__('os')", 1, "unexpected \"__import__"),
    ("(1;%a%) < (1;%b%) ]", 19, "unexpected '\\]' after a complete formula"),
    ("(x;%a%) < 1", 1, "unexpected"),
])
def test_errors_name_formula_and_position(formula: str, position: int, message: str) -> None:
    with pytest.raises(FormulaError, match=message) as e:
        parse(formula)
    assert e.value.position + 1 == position
    assert f"character {position}" in str(e.value) and repr(formula.strip()) in str(e.value)


def test_every_shared_suite_formula_parses(shared_datasets: Path) -> None:
    formulas = [p["formula"] for f in sorted((shared_datasets / "syntaxgym").glob("*.json"))
                for p in json.loads(f.read_text())["predictions"]]
    assert len(formulas) >= 6
    for text in formulas:
        assert parse(text).regions


@pytest.mark.parametrize(("formula", "message"), [
    ("[" * 100 + "(1;%a%)" + "]" * 100 + " > 0", "brackets nest more than 32 deep"),
    (" + ".join(["(1;%a%)"] * 1500) + " > 0", "more than 400 tokens"),
])
def test_deep_or_long_formulas_are_one_line_errors_not_recursion(formula: str, message: str) -> None:
    """A 200-deep formula was a RecursionError (issue 35)."""
    with pytest.raises(FormulaError, match=message):
        parse(formula)
