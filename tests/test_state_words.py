"""One vocabulary for a run's states: every word is a ``lingdiag.rundir.status.Status``, and no module spells one
as a string where it says or asks a state (a comparison with a status, a status given or returned, a list of
states); the source is walked, as ``tests/test_architecture.py`` walks it for its rules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from helpers import SRC

from lingdiag.rundir import Phase, Status

WORDS = {s.value for s in Status}
HOME = Path(SRC) / "lingdiag" / "rundir" / "status.py"
STATEFUL = ("status", "state")


def _word(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS


def _words(node: ast.AST) -> bool:
    """A state's word, or a tuple, list or set of them."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_word(e) for e in node.elts)
    return _word(node)


def _stateful(node: ast.AST) -> bool:
    return any(w in ast.unparse(node).lower() for w in STATEFUL)


def _stray(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Where ``tree`` spells a state as a string: compared with, given as, assigned to or returned as a state,
    or listed with others.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_words(s) for s in sides) and any(_stateful(s) for s in sides if not _words(s)):
                yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.keyword) and node.arg in STATEFUL and _words(node.value):
            yield node.value.lineno, ast.unparse(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            if any(_stateful(t) for t in targets) and any(_word(v) for v in values):
                yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.FunctionDef) and any(w in node.name for w in STATEFUL):
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None and any(
                        _word(v) for v in (ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value])):
                    yield ret.lineno, ast.unparse(ret)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) > 1 and _words(node):
            yield node.lineno, ast.unparse(node)


def test_no_module_spells_a_state_as_a_string() -> None:
    stray = [f"{path.relative_to(SRC)}:{line}: {code}" for path in sorted(Path(SRC, "lingdiag").rglob("*.py"))
             if path != HOME for line, code in _stray(ast.parse(path.read_text()))]
    assert not stray, "\n".join(stray)


def test_the_walk_finds_what_it_looks_for() -> None:
    found = [code for _, code in _stray(ast.parse(
        "NOT_DONE = ('failed', 'gave up')\n"
        "ok = r.status == 'done'\n"
        "row = replace(row, status='unreadable')\n"
        "entry.state.status, entry.state.reason = 'done', None\n"
        "def _status(e):\n    return 'partial', None\n"
        "waiting = status.get(k) != 'done'\n"
        "fine = r.label == 'failed'\n"
        "OUTCOMES = ('correct', 'failed')\n"))]
    assert len(found) == 6 and not any("label" in c or "correct" in c for c in found), found


def test_a_run_s_phase_and_a_study_s_words_are_the_status_words() -> None:
    assert {p.value for p in Phase} <= set(Status) and all(isinstance(p.value, Status) for p in Phase)
    assert f"{Status.GAVE_UP}" == "gave up" and str(Status.DONE) == "done"


def test_a_study_json_attempt_of_another_word_is_one_line_in_words() -> None:
    from pydantic import ValidationError

    from lingdiag.errors import one_line
    from lingdiag.rundir.study import Attempts

    assert Attempts.model_validate_json('{"status": "done"}').status is Status.DONE
    try:
        Attempts.model_validate({"status": "finishd"})
    except ValidationError as e:
        line = one_line(e, "study.json")
    assert line == "study.json: status: Input should be 'planned', 'done' or 'failed' (got 'finishd')"
