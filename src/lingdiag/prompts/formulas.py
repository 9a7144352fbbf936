"""SyntaxGym's prediction formulas over region surprisals, parsed by a grammar (never ``eval``).

The language of SyntaxGym's suites (Hu et al. 2020; ``syntaxgym.prediction``)::

    formula    := comparison (("&" | "|") comparison)*
    comparison := sum (("<" | ">" | "=") sum)*
    sum        := atom (("+" | "-") atom)*
    atom       := region | number | "[" formula "]"
    region     := "(" (INTEGER | "*") ";" "%" CONDITION "%" ")"

``(5;%match%)`` is the surprisal of region 5 under condition ``match`` (``*``: of the whole
sentence); brackets group. Operators of one level associate to the left, as in SyntaxGym's
pyparsing grammar, and ``=`` is SyntaxGym's tolerance (``numpy.isclose`` with relative 1e-5
and absolute 1e-3). A formula is parsed once into a tree of frozen nodes; evaluation reads
surprisals from a mapping and never runs text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lingdiag.errors import ConfigError

EQUALITY_RTOL = 1e-5
EQUALITY_ATOL = 1e-3
"""SyntaxGym's tolerance for ``=`` (in its units, bits)."""

ALL_REGIONS = "*"

MAX_TOKENS = 400
"""Tokens a formula may have (SyntaxGym's longest has about 40): bounds the tree's depth, which
parsing, type checking and evaluation walk recursively."""
MAX_NESTING = 32
"""Brackets a formula may nest (SyntaxGym's deepest nests 2)."""

Surprisals = Mapping[tuple[str, str], float]
"""``(region number or "*", condition name)`` → surprisal."""


class FormulaError(ConfigError):
    """A formula that does not parse or does not type-check; names the formula and the position."""

    def __init__(self, formula: str, position: int, problem: str) -> None:
        self.formula, self.position = formula, position
        super().__init__(f"prediction formula {formula.strip()!r}, character {position + 1}: {problem}")


@dataclass(frozen=True, slots=True)
class Region:
    """``(number;%condition%)``: a region's surprisal under a condition."""

    number: str
    condition: str


@dataclass(frozen=True, slots=True)
class Number:
    """A literal number."""

    value: float


@dataclass(frozen=True, slots=True)
class BinaryOp:
    """``left op right``."""

    op: str
    left: Node
    right: Node
    position: int
    """Where the operator stands in the formula (0-based), for errors."""


Node = Region | Number | BinaryOp

_ARITHMETIC: dict[str, Callable[[float, float], float]] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b}
_COMPARISON: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "=": lambda a, b: abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b),  # numpy.isclose(a, b)
}
_LOGIC: dict[str, Callable[[bool, bool], bool]] = {"&": lambda a, b: a and b, "|": lambda a, b: a or b}

_TOKEN = re.compile(r"\s*(?:(?P<region>\(\s*(?P<num>\d+|\*)\s*;\s*%(?P<cond>[A-Za-z0-9_\-]+)%\s*\))"
                    r"|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<op>[\[\]&|<>=+\-]))")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    """``region``, ``number``, ``op`` or ``end``."""
    text: str
    position: int
    node: Node | None = None


def _shown(token: _Token) -> str:
    return repr(token.text) if token.text else "the end"


def _tokens(formula: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(formula) and len(out) <= MAX_TOKENS:  # the parser refuses more; no need to read on
        if formula[pos:].strip() == "":
            break
        m = _TOKEN.match(formula, pos)
        if m is None:
            start = pos + len(formula[pos:]) - len(formula[pos:].lstrip())
            raise FormulaError(formula, start, f"unexpected {formula[start:start + 12]!r}; expected a region "
                               "like (5;%cond%), a number, [ ], &, |, <, >, =, + or -")
        start = m.start(m.lastgroup or 0)
        if m.group("region"):
            out.append(_Token("region", m.group("region"), start, Region(m.group("num"), m.group("cond"))))
        elif m.group("number"):
            out.append(_Token("number", m.group("number"), start, Number(float(m.group("number")))))
        else:
            out.append(_Token("op", m.group("op"), start))
        pos = m.end()
    out.append(_Token("end", "", len(formula)))
    return out


class _Parser:
    """Recursive descent over the token list, one method per grammar rule."""

    def __init__(self, formula: str) -> None:
        self.text, self.tokens, self.k = formula, _tokens(formula), 0
        self.nesting = 0
        if len(self.tokens) > MAX_TOKENS:
            raise FormulaError(formula, self.tokens[MAX_TOKENS].position,
                               f"more than {MAX_TOKENS} tokens; split the prediction into several")

    def peek(self) -> _Token:
        return self.tokens[self.k]

    def take(self) -> _Token:
        token = self.tokens[self.k]
        self.k += 1
        return token

    def level(self, ops: Mapping[str, object], below: Callable[[], Node]) -> Node:
        node = below()
        while self.peek().kind == "op" and self.peek().text in ops:
            op = self.take()
            node = BinaryOp(op.text, node, below(), op.position)
        return node

    def formula(self) -> Node:
        return self.level(_LOGIC, self.comparison)

    def comparison(self) -> Node:
        return self.level(_COMPARISON, self.sum)

    def sum(self) -> Node:
        return self.level(_ARITHMETIC, self.atom)

    def atom(self) -> Node:
        token = self.take()
        if token.node is not None:
            return token.node
        if token.text == "[":
            self.nesting += 1
            if self.nesting > MAX_NESTING:
                raise FormulaError(self.text, token.position, f"brackets nest more than {MAX_NESTING} deep")
            node = self.formula()
            self.nesting -= 1
            close = self.take()
            if close.text != "]":
                raise FormulaError(self.text, close.position, f"expected ']' to close the '[' at character "
                                   f"{token.position + 1}, found {_shown(close)}")
            return node
        raise FormulaError(self.text, token.position,
                           f"expected a region, a number or '[', found {_shown(token)}")


@dataclass(frozen=True, slots=True)
class Formula:
    """A parsed, type-checked prediction formula."""

    text: str
    tree: Node

    @property
    def regions(self) -> tuple[Region, ...]:
        """Every region the formula reads, in reading order."""
        out: list[Region] = []

        def walk(node: Node) -> None:
            if isinstance(node, Region):
                out.append(node)
            elif isinstance(node, BinaryOp):
                walk(node.left)
                walk(node.right)

        walk(self.tree)
        return tuple(out)

    def __call__(self, surprisals: Surprisals) -> bool:
        """Whether the prediction holds for one item's region surprisals.

        Raises:
            KeyError: A region the formula reads is missing from ``surprisals``.
        """
        value = _evaluate(self.tree, surprisals)
        assert isinstance(value, bool)  # guaranteed by the type check in ``parse``
        return value


def _evaluate(node: Node, s: Surprisals) -> float | bool:
    if isinstance(node, Region):
        return s[(node.number, node.condition)]
    if isinstance(node, Number):
        return node.value
    left, right = _evaluate(node.left, s), _evaluate(node.right, s)
    if node.op in _LOGIC:
        return _LOGIC[node.op](bool(left), bool(right))
    if node.op in _COMPARISON:
        return _COMPARISON[node.op](float(left), float(right))
    return _ARITHMETIC[node.op](float(left), float(right))


def _type(node: Node, formula: str) -> str:
    """``number`` or ``truth``; a misplaced operand is a ``FormulaError``."""
    if not isinstance(node, BinaryOp):
        return "number"
    left, right = _type(node.left, formula), _type(node.right, formula)
    want, gives = ("truth", "truth") if node.op in _LOGIC else ("number", "truth" if node.op in _COMPARISON
                                                                 else "number")
    if left != want or right != want:
        raise FormulaError(formula, node.position,
                           f"{node.op!r} takes two {'comparisons' if want == 'truth' else 'numbers'}, "
                           f"got a {left} and a {right}")
    return gives


def parse(formula: str) -> Formula:
    """Parse and type-check ``formula``; the whole formula must be one comparison or a logic of them.

    Raises:
        FormulaError: Names the formula, the character position and what was expected.
    """
    parser = _Parser(formula)
    tree = parser.formula()
    rest = parser.peek()
    if rest.kind != "end":
        raise FormulaError(formula, rest.position, f"unexpected {rest.text!r} after a complete formula")
    if _type(tree, formula) != "truth":
        raise FormulaError(formula, 0, "a prediction must compare surprisals (<, >, =), not just compute a number")
    return Formula(formula, tree)
