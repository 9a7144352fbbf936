r"""The reader's first stage: an answer's text as written → the plain text the later stages read.

What a chat model wraps its answer in is taken off, never what it says: Unicode NFKC (full-width
``：`` and ``Ｔｒｕｅ``), zero-width and bidi marks, end-of-turn tokens, HTML emphasis, Markdown
(emphasis, headings, block quotes, bullets, list numbers, code ticks), LaTeX (``\boxed{True}``
becomes a final-answer line, ``\text{…}`` its text, ``$`` delimiters go), answer tags
(``<answer>False</answer>`` a final-answer line; longer tagged text read without its tags), typographic quotes
and apostrophes, English contractions (``isn't`` → ``is not``, so that negations are words) and
blank lines. A line holding only an answer cue (``### Answer``, ``**Final Answer:**``) is joined
to the line after it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from lingdiag.parse.language import FOLDED_MARKS

INVISIBLE = "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
"""Zero-width and bidi marks (a regex class): no text, so ``对\u200b不起`` is ``对不起``."""
_INVISIBLE = re.compile(INVISIBLE)
_FOLDED = str.maketrans(dict(FOLDED_MARKS))
_SPECIAL = re.compile(r"<\|[^|>\n]{0,40}\|>|</?s>|<end_of_turn>|<start_of_turn>|<eos>|<pad>|\[/?INST\]")
_HTML = re.compile(r"</?(?:b|strong|em|i|u|p|span|div|code|mark)\s*>", re.I)
_BREAK = re.compile(r"<br\s*/?>", re.I)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{([^{}\n]{1,80})\}")
ANSWER_TAGS = ("answer", "final_answer", "final", "label", "verdict", "result", "prediction", "output", "choice",
               "conclusion", "antwort", "urteil", "réponse", "reponse", "respuesta", "答案", "答え", "回答")
"""Tags whose short content is the answer (``<verdict>False</verdict>``), in the built-in languages too."""
_TAG_NAMES = "|".join(ANSWER_TAGS)
_ANSWER_TAG = re.compile(rf"<({_TAG_NAMES})>\s*([^<>\n]{{1,80}}?)\s*</\1>", re.I)
_TAG = re.compile(rf"</?(?:{_TAG_NAMES})>", re.I)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|texttt)\s*\{([^{}\n]{0,80})\}")
_MATH = re.compile(r"\$\$?|\\[()\[\]]")
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "‚": "'",
                         "`": "", "´": "'", "‹": '"', "›": '"'})
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.M)
# A line's marks open it after spaces and tabs only: ``^\s*`` would run on over every blank line after
# each line start, and an answer of 20,000 blank lines took 9 s.
_QUOTE_BLOCK = re.compile(r"^[ \t]*(?:>\s*)+", re.M)
_BULLET = re.compile(r"^[ \t]*(?:[-*+•●▪◦·‣]|\d{1,2}[.)](?=\s+\S))\s+", re.M)
_EMPHASIS = re.compile(r"\*+|(?<!\w)_{1,3}|_{1,3}(?!\w)|~~")
_CONTRACTIONS = (
    (re.compile(r"\b(can)'t\b", re.I), r"\1not"),
    (re.compile(r"\b(w)on't\b", re.I), r"\1ill not"),
    (re.compile(r"\b(sha)n't\b", re.I), r"\1ll not"),
    (re.compile(r"(\w)n't\b", re.I), r"\1 not"),
    (re.compile(r"\b(it|that|this|what|there|here|he|she|which|who|answer|one)'s\b", re.I), r"\1 is"),
    (re.compile(r"\b(i)'m\b", re.I), r"\1 am"),
    (re.compile(r"\b(i|you|we|they|he|she|it)'d\b", re.I), r"\1 would"),
    (re.compile(r"\b(i|you|we|they|he|she|it)'ll\b", re.I), r"\1 will"),
    (re.compile(r"\b(you|we|they)'re\b", re.I), r"\1 are"),
)
# A check mark after an answer confirms it (True ✅): it goes; an arrow emoji or ASCII arrow is an arrow (➡️ False,
# => True).
_CHECKS = re.compile("[\u2705\u2714\u2611\u2713]\ufe0f?")
_CROSSES = re.compile("[\u274c\u2717\u2718\u2716\u274e]\ufe0f?")
"""A cross mark after a label says no to it (True ❌)."""
_ARROWS = re.compile("[\u27a1\u2b95\u21d2]\ufe0f?|(?<![<=-])(?:--?|==?)>")
_SPACES = re.compile(r"[ \t\f\v\u00a0\u3000]+")
TABLE_COLUMNS = frozenset({
    "answer", "final answer", "label", "verdict", "prediction", "result", "classification", "conclusion", "judgment",
    "judgement", "output", "response", "predicted label", "final label", "correct answer", "best answer",
    "chosen answer", "selected answer", "predicted answer", "richtige antwort", "bonne réponse", "respuesta correcta",
    "正确答案", "正解", "antwort", "endgültige antwort", "urteil", "ergebnis",
    "réponse", "réponse finale", "étiquette", "résultat", "respuesta", "respuesta final", "etiqueta", "resultado",
    "veredicto", "答案", "最终答案", "标签", "结论", "结果", "判断", "答え", "最終的な答え", "回答", "ラベル", "結論",
    "結果"})
"""Column names that hold the answer in a one-row Markdown table (``| Label | Reason |``), in the
built-in languages; not ``option`` or ``choice``, which name what a row is about (``| Option | Correct? |``)."""
_TABLE_RULE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)*[ \t]*:?-{3,}:?[ \t]*\|?[ \t]*")
_CELL_TRIM = " \t*_:"
_TRIM = " \t:：=-–—>*#.。"


def normalise(text: str, cues: Sequence[str] = ()) -> str:
    """``text`` with its wrapping taken off (the module's list); ``cues`` (lower-case) name the
    lines that only introduce an answer, joined to the line after them.
    """
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text).translate(_FOLDED))
    text = _SPECIAL.sub(" ", text)
    text = _HTML.sub("", _BREAK.sub("\n", text))
    if "|" in text:
        text = _tables(text)
    text = _LATEX_TEXT.sub(r"\1", text)
    # A boxed answer is the final answer, wherever it stands; so is a short one in answer tags (what
    # prompts in the R1 style ask for). Longer tagged text is read as text, the tags taken off.
    # What follows it on its line stays there: "<answer>True</answer> is incorrect." judges it.
    text = _BOXED.sub(lambda m: "\nFinal answer: " + m.group(1).strip(), text)
    text = _TAG.sub("\n", _ANSWER_TAG.sub(lambda m: "\nFinal answer: " + m.group(2), text))
    text = _MATH.sub(" ", text).translate(_QUOTES)
    text = _ARROWS.sub("→", _CROSSES.sub(" no ", _CHECKS.sub(" ", text)))
    text = _QUOTE_BLOCK.sub("", _HEADING.sub("", text))
    if "*" in text or "_" in text or "~" in text:
        text = _EMPHASIS.sub("", text)
    text = _BULLET.sub("", text)
    if "'" in text:
        for pattern, replacement in _CONTRACTIONS:
            text = pattern.sub(replacement, text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.splitlines()]
    return "\n".join(_joined([line for line in lines if line], {c.lower() for c in cues}))


def _joined(lines: list[str], cues: set[str]) -> list[str]:
    """``lines`` with each line that only names a cue (``Answer:``) joined to the next one."""
    out: list[str] = []
    pending = ""
    for line in lines:
        if pending:
            line, pending = f"{pending}: {line}", ""
        if line.strip(_TRIM).lower() in cues:
            pending = line.strip(_TRIM)
            continue
        out.append(line)
    if pending:
        out.append(pending)
    return out


def _cells(line: str) -> list[str] | None:
    """The cells of a Markdown table row (``| a | b |``), or None if ``line`` is none."""
    body = line.strip()
    if "|" not in body:
        return None
    return [c.strip() for c in body.removeprefix("|").removesuffix("|").split("|")]


def _tables(text: str) -> str:
    """``text`` with each one-row Markdown table whose header names an answer column
    (``TABLE_COLUMNS``) written as lines: that column's cell a final-answer line, each other cell
    ``header: cell``. A table of several rows is left as it is (each row is an item, not the answer).
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        head = _cells(lines[i]) if i + 2 < len(lines) and _TABLE_RULE.fullmatch(lines[i + 1]) else None
        row = _cells(lines[i + 2]) if head is not None else None
        more = i + 3 < len(lines) and _cells(lines[i + 3]) is not None
        if head is not None and row is not None and len(row) == len(head) and not more:
            names = [h.strip(_CELL_TRIM).lower() for h in head]
            if any(n in TABLE_COLUMNS for n in names):
                out += [f"Final answer: {cell}" if n in TABLE_COLUMNS else f"{h.strip(_CELL_TRIM)}: {cell}"
                        for h, n, cell in zip(head, names, row, strict=True)]
                i += 3
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)
