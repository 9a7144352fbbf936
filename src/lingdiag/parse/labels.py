"""Free text → label. Anything not clearly one label is ``UNPARSED``, never a guess.

Accepted, in order: a JSON object with the label key (code fences, single quotes and
text around the object tolerated); the whole answer being a label; the answer starting
with a label word (and naming no other label in that line); the last ``Answer:``,
``Label:`` or ``... is`` phrase naming a label, when no label follows it; a last line that is
a label. Case, quotes, asterisks and trailing punctuation are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.records import UNPARSED

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_STRIP = " \t\r\n\"'`*.,:;!()[]{}<>"


def _norm(text: str) -> str:
    return text.strip(_STRIP).lower()


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (inside code fences or not), or None."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for cand in candidates:
        start = cand.find("{")
        while start != -1:
            depth, in_str, esc = 0, False, False
            for end in range(start, len(cand)):
                ch = cand[end]
                if in_str:
                    esc = (ch == "\\") and not esc
                    if ch == '"' and not esc:
                        in_str = False
                    continue
                if ch == '"':
                    in_str = True
                elif ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        blob = cand[start:end + 1]
                        for attempt in (blob, blob.replace("'", '"')):
                            try:
                                obj = json.loads(attempt)
                            except json.JSONDecodeError:
                                continue
                            if isinstance(obj, dict):
                                return obj
                        break
            start = cand.find("{", start + 1)
    return None


def _names_label(text: str, words: str) -> bool:
    """Whether ``text`` names a label (``words``: the label alternation)."""
    return re.search(rf"(?<![\w-])({words})(?![\w-])", text, re.I) is not None


def parse_label(
    text: str,
    labels: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    json_key: str = "label",
) -> tuple[str, dict[str, Any]]:
    """Map a model answer to one of ``labels``.

    Args:
        text: The raw generated text.
        labels: The label vocabulary, e.g. ``("True", "False", "Unknown")``.
        aliases: Extra surface forms mapped to labels, e.g. ``{"entailment": "0"}``.
        json_key: The key holding the label in a JSON answer.

    Returns:
        ``(label or UNPARSED, detail)``; ``detail`` holds the parsed JSON object, if any, and
        under ``rule`` the name of the rule that decided (``lingdiag inspect`` counts them):
        ``json``, ``json-field``, ``whole-answer``, ``leading-label``, ``answer-phrase``,
        ``last-line``, or for unparsed answers ``phrase-then-label`` and ``no-label``.
    """
    table = {_norm(lab): lab for lab in labels}
    table.update({_norm(k): v for k, v in (aliases or {}).items()})
    words = "|".join(sorted(map(re.escape, table), key=len, reverse=True))
    detail: dict[str, Any] = {}

    obj = extract_json(text)
    if obj is not None:
        detail["json"] = obj
        value = obj.get(json_key)
        if isinstance(value, (str, int)) and _norm(str(value)) in table:
            return table[_norm(str(value))], {**detail, "rule": "json"}
    m = re.search(rf'"{re.escape(json_key)}"\s*:\s*"?([^",}}\n]+)', text)
    if m and _norm(m.group(1)) in table and not _names_label(text[m.end():], words):
        return table[_norm(m.group(1))], {**detail, "rule": "json-field"}

    body = _FENCE.sub(lambda mm: mm.group(1), text).strip()
    if _norm(body) in table:
        return table[_norm(body)], {**detail, "rule": "whole-answer"}
    first = re.match(rf"[\s\"'`*(\[]*({words})(?![\w-])", body, re.I)
    if first:
        label = table[first.group(1).lower()]
        # "True or False? ..." names several labels in its first line: not an answer.
        others = {table[w.lower()] for w in re.findall(rf"(?<![\w-])({words})(?![\w-])", body.splitlines()[0], re.I)}
        if others == {label}:
            return label, {**detail, "rule": "leading-label"}
    phrases = list(re.finditer(rf"\b(?:answer|label|judg(?:e)?ment|relation|prediction|output)\b[^.\n]{{0,20}}?"
                               rf"(?:is|:|=)\s*[\"'*`]*({words})(?![\w-])", body, re.I))
    if phrases:
        # The last such phrase is the answer, unless a label follows it: "Answer: True. Actually
        # False." and an echoed schema ("label": "True / False / Unknown") are not one label.
        last = phrases[-1]
        if _names_label(body[last.end():], words):
            return UNPARSED, {**detail, "rule": "phrase-then-label"}
        return table[last.group(1).lower()], {**detail, "rule": "answer-phrase"}
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if lines and _norm(lines[-1]) in table:
        return table[_norm(lines[-1])], {**detail, "rule": "last-line"}
    return UNPARSED, {**detail, "rule": "no-label"}
