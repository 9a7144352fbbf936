"""The relation in a CxNLI answer: a code (0/1/2) or a label word, found by named rules;
anything not clearly one label is unparsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lingdiag.records import UNPARSED, Prediction
from lingdiag.suites.cxnli import data

_CODE = r"(?<![\w.,-])([012])(?![\w-]|[.,]\d)"
_WORD = r"\b(entailment|neutral|contradiction)\b"
_TOKEN = re.compile(f"{_CODE}|{_WORD}", re.I)
_LEADING = re.compile(rf"^[\s\"'`*(\[]*(?:{_CODE}|{_WORD})", re.I)
_BARE = re.compile(rf"^[\s\"'`*(\[]*(?:{_CODE}|{_WORD})[\s\"'`*)\].]*$", re.I)
_STEP = re.compile(r"^\s*(?:step\s*)?\d+[.):]\s+(?=\S)", re.I)
# The separator may not cross a line: "...is:\n0 – Entailment: ..." is a recited code list.
_PHRASE = re.compile(r"\b(?:answer|relation|label|output|code|value)\b[^\n]{0,40}?(?:\bis\b|:|=|–|-)[ \t]*"
                     rf"[\"'`*(\[]*(?:{_CODE}|{_WORD})", re.I)


def _label(m: re.Match[str]) -> str:
    return data.CODES[m.group(1)] if m.group(1) else m.group(2).lower()


def _labels_in(text: str) -> set[str]:
    return {_label(m) for m in _TOKEN.finditer(text)}


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def answer_lines(text: str, cot: bool, echo: Sequence[str] = (), truncated: bool = False) -> list[str]:
    """The non-empty lines of an answer that may state the model's choice.

    Dropped: step numbers under CoT ("1. ..."); a recited code list (several lines opening
    with different labels) otherwise; lines repeating a line of the instruction
    (``echo``), and, when generation was cut off, a last line that is the start of one.

    Args:
        text: The generated text.
        cot: Whether the prompt asked for step-by-step reasoning.
        echo: Lines of the prompt's instruction.
        truncated: Whether generation stopped at its token limit.

    Returns:
        The remaining lines, stripped, in order.
    """
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if cot:  # "1. ..." numbers a reasoning step, it does not answer
        lines = [ln for ln in (_STEP.sub("", ln) for ln in lines) if ln]
    elif len({_label(m) for ln in lines if (m := _LEADING.match(ln))}) > 1:
        lines = [ln for ln in lines if not _LEADING.match(ln)]
    known = [_norm(e) for e in echo if e.strip()]

    def echoed(k: int, line: str) -> bool:
        n = _norm(line)
        cut = truncated and k == len(lines) - 1 and not _BARE.match(line)
        return any(n == e or (e.startswith(n) and (len(n) >= 20 or cut)) for e in known)

    return [ln for k, ln in enumerate(lines) if not echoed(k, ln)]


def parse_relation(text: str, cot: bool = False, echo: Sequence[str] = (), truncated: bool = False) -> tuple[str, str]:
    """The relation named by a model answer: a code 0/1/2 or the word itself.

    After :func:`answer_lines` cleaning, rules in order, on the last line first under CoT,
    then on the whole answer: the last ``answer/relation/label/output ... is|:|=`` phrase;
    an answer opening with a label (not on the whole answer under CoT, where "1." opens a
    list) whose first line names no other label; a text naming exactly one label. Anything
    else is ``UNPARSED``.

    Args:
        text: The generated text.
        cot: Whether the prompt asked for reasoning with the answer on the last line.
        echo: Lines of the instruction; an answer repeating them is not choosing a label.
        truncated: Whether generation stopped at its token limit.

    Returns:
        ``(label or UNPARSED, rule that matched)``.
    """
    lines = answer_lines(text, cot, echo, truncated)
    if not lines:
        return UNPARSED, "empty"
    segments = [("last-line", lines[-1])] if cot else []
    segments.append(("answer", "\n".join(lines)))
    for name, seg in segments:
        phrases = list(_PHRASE.finditer(seg))
        if phrases:
            return _label(phrases[-1]), f"{name}/phrase"
        leading = _LEADING.match(seg)
        if leading and (not cot or name == "last-line") and _labels_in(seg.splitlines()[0]) == {_label(leading)}:
            return _label(leading), f"{name}/leading"
        found = _labels_in(seg)
        if len(found) == 1:
            return found.pop(), f"{name}/only-label"
    return UNPARSED, "no-label"


def parse_answer(text: str) -> Prediction:
    """An answer produced elsewhere → entailment / neutral / contradiction or ``UNPARSED`` and the
    rule that decided, by the rules a run applies to a non-CoT answer (``lingdiag score cxnli``).
    """
    label, rule = parse_relation(text)
    return Prediction(label, {"rule": rule})
