"""Free text → label, in the prompt's language. Anything not clearly one label is ``UNPARSED``, never a guess.

Accepted, in order: a JSON object with the label key (code fences, single quotes and
text around the object tolerated); the whole answer being a label; the answer starting
with a label word (and naming no other label in that line); the last ``Answer:``,
``Label:`` or ``... is`` phrase naming a label, when no label follows it; a last line that is
a label. Case, quotes, asterisks and trailing punctuation are ignored.

The answer cues (``Answer``, ``Antwort``, ``Respuesta``, ``答案``, ``回答`` …) and copulas (``is``,
``ist``, ``是``, ``は`` …) are the :class:`AnswerLanguage`'s. A label is found by the label set,
not by English word boundaries: a label edge in a script written without spaces (Han, kana,
Thai) needs no boundary, so ``答案是对的`` names ``对``; a Latin edge still does (``Truely`` is not
``True``). Every language but English (whose parsing predates languages and stays as it was)
normalises answer and labels with Unicode NFKC first (full-width ``：``, ``Ｔｒｕｅ``), recorded in
the detail with the language, and refuses an answer phrase that negates (``答案不是对``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lingdiag.errors import ConfigError, UnknownNameError
from lingdiag.records import UNPARSED

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_STRIP = " \t\r\n\"'`*.,:;!()[]{}<>"


_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
"""Letters of scripts written without spaces between words (Thai, kana, Han): no word boundary there."""


@dataclass(frozen=True)
class AnswerLanguage:
    """How answers in one language name their label: cue words, copulas, negations, normalisation."""

    code: str
    """BCP 47 tag (``en``, ``zh``, ``ru``)."""
    cues: tuple[str, ...]
    """Words that introduce the answer (``answer``, ``答案``); plain text, matched case-insensitively."""
    copulas: tuple[str, ...]
    """What joins a cue to its label besides ``:`` and ``=`` (``is``, ``ist``, ``是``)."""
    negations: tuple[str, ...] = ()
    """Words that deny a label: between a cue and its label (``不是``, ``nicht``) or in the label's own
    clause after it (``Wahr ist das nicht``); matched as words (``no`` is not inside ``uno``)."""
    questions: tuple[str, ...] = ()
    """Words that question or hedge a label in its own clause after it (``ли``, ``oder``, ``吗``)."""
    reasons: tuple[str, ...] = ()
    """Words that open a reason after a label (``because``, ``weil``, ``因为``): the label's clause
    ends there, so ``False because he did not finish`` is not a negated ``False``."""
    particles: tuple[str, ...] = ()
    """What may follow a label besides punctuation, a space or the end (``的``, ``です``, Korean
    ``입니다``): in a script without spaces nothing else may, so ``对不起`` and ``对于`` do not name
    ``对``, nor ``答えは誤りではありません`` ``誤り``."""
    nfkc: bool = True
    """Normalise answer and labels with Unicode NFKC first (full-width forms)."""
    gap: str = ".。\n"
    """Characters that end the stretch between a cue and its copula."""
    quotes: str = "\"'*`「」『』“”‘’¡¿"
    """Quote marks allowed before a label."""
    strip: str = _STRIP + "。、「」『』“”‘’【】¡¿"
    """Characters trimmed around a whole answer or a line."""

    def extended(self, words: Mapping[str, Iterable[str]]) -> AnswerLanguage:
        """This language with more words of each kind (a suite's own: ``{"cues": ["Urteil"]}``)."""
        more: dict[str, Any] = {kind: (*getattr(self, kind), *(w for w in ws if w not in getattr(self, kind)))
                                for kind, ws in words.items()}
        return replace(self, **more) if more else self

    def recorded(self) -> dict[str, str]:
        """What a parse detail records of the language (English's records predate languages: nothing)."""
        if self.code == ENGLISH.code and not self.nfkc:
            return {}
        return {"language": self.code, **({"normalisation": "NFKC"} if self.nfkc else {})}


WORD_KINDS = ("cues", "copulas", "negations", "questions", "reasons", "particles")
"""The kinds of answer words a language has and a suite file may add to (or give, for a language
lingdiag has none of)."""
NEEDED = ("cues", "negations")
"""The kinds a language without built-in words must be given: without cues no answer phrase is
read, without negations a denied label would be read as the label."""

ENGLISH = AnswerLanguage("en", ("answer", "label", "judgment", "judgement", "relation", "prediction", "output"),
                         ("is",), ("not", "no", "never", "isn't", "isn’t", "cannot", "can't", "can’t", "nor"),
                         ("whether", "maybe", "perhaps", "possibly"), ("because", "since", "as", "given"),
                         nfkc=False, gap=".\n", quotes="\"'*`", strip=_STRIP)
LANGUAGES: Mapping[str, AnswerLanguage] = {lang.code: lang for lang in (
    ENGLISH,
    AnswerLanguage("de", ("antwort", "label", "urteil", "lösung", "ergebnis"), ("ist", "lautet"),
                   ("nicht", "kein", "keine", "nie", "niemals"), ("oder", "ob", "vielleicht"),
                   ("weil", "da", "denn")),
    AnswerLanguage("es", ("respuesta", "etiqueta", "juicio", "resultado"), ("es",),
                   ("no", "nunca", "ni", "tampoco"), ("o", "quizás", "quizá", "acaso", "tal vez"),
                   ("porque", "ya que", "pues", "dado que")),
    AnswerLanguage("fr", ("réponse", "étiquette", "jugement", "résultat"), ("est",),
                   ("pas", "non", "ne", "jamais", "ni"), ("ou", "peut-être", "si", "est-ce"),
                   ("car", "parce", "puisque")),
    AnswerLanguage("zh", ("答案", "回答", "答", "标签", "结论", "判断"), ("是", "为", "為"),
                   ("不是", "不为", "不為", "并非", "並非", "没有", "沒有", "未必", "不一定"),
                   ("吗", "嗎", "吧", "还是", "還是", "或者", "也许", "也許", "可能"), ("因为", "因為", "由于", "由於"),
                   ("的", "了", "啊", "呀")),
    AnswerLanguage("ja", ("答え", "回答", "解答", "答", "ラベル", "判断"), ("は", "が"),
                   ("ない", "ではない", "じゃない", "ません", "違う", "違い"), ("か", "かも"),
                   ("から", "ので", "なぜなら"), ("です", "だ", "である", "でした")),
)}
"""The answer languages built in, by code; a suite adds words of its own (``extended``) and
gives all of them for a language not here (``suite_language``)."""


def language(code: str) -> AnswerLanguage:
    """The built-in answer language ``code``; an unknown one is a one-line ``UnknownNameError``."""
    if code not in LANGUAGES:
        raise UnknownNameError("answer language", code, LANGUAGES)
    return LANGUAGES[code]


def suite_language(code: str, words: Mapping[str, Sequence[str]]) -> AnswerLanguage:
    """The answer language ``code`` with a suite's own ``words`` (kind → words, ``WORD_KINDS``).

    A language lingdiag has no words for (``ru``, ``ko``, ``ar``) is built from ``words`` alone,
    which must then hold ``NEEDED``: never parsed with another language's rules.

    Raises:
        ConfigError: no built-in words for ``code`` and some of ``NEEDED`` not given.
    """
    given = {kind: tuple(ws) for kind, ws in words.items() if ws}
    if code in LANGUAGES:
        return LANGUAGES[code].extended(given)
    missing = [kind for kind in NEEDED if kind not in given]
    if missing:
        raise ConfigError(f"language {code!r}: lingdiag has no answer words for it (built in: "
                          f"{', '.join(LANGUAGES)}); give its {' and '.join(missing)} (and, if it has them, "
                          f"{', '.join(k for k in WORD_KINDS if k not in NEEDED)})")
    return AnswerLanguage(code, given["cues"], given.get("copulas", ()), given["negations"],
                          given.get("questions", ()), given.get("reasons", ()), given.get("particles", ()))


def _norm(text: str, strip: str = _STRIP) -> str:
    return text.strip(strip).lower()


def _bounded(word: str, *, before: bool = True, after: Sequence[str] | None = None) -> str:
    """``word`` as a regex, with a word boundary on each side whose edge is not in an unspaced script.

    ``after`` given, an edge in an unspaced script is bounded too: punctuation, a space, the end
    or one of ``after`` (the language's ``particles``) must follow it; in a spaced script a
    particle may follow where a word boundary would.
    """
    out = re.escape(word)
    if before and not _UNSPACED.match(word[:1]):
        out = r"(?<![\w-])" + out
    particles = "".join("|" + re.escape(p) for p in after or ())
    if _UNSPACED.match(word[-1:]):
        out += "" if after is None else "(?=$|(?!" + INVISIBLE + ")\\W" + particles + ")"
    else:  # a particle may close a word of a spaced script too (Korean 참입니다)
        out += "(?=$|[^\\w-]" + particles + ")" if particles else r"(?![\w-])"
    return out


def _alternation(words: Iterable[str], *, before: bool = True, after: Sequence[str] | None = None) -> str:
    """One group matching any of ``words``, longest first, each bounded where its script needs it."""
    ordered = sorted(words, key=lambda w: len(re.escape(w)), reverse=True)  # the order English always had
    return "(" + "|".join(_bounded(w, before=before, after=after) for w in ordered) + ")"


INVISIBLE = "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
"""Zero-width and bidi marks (a regex class): no word boundary, no text (``对\u200b不起`` is still ``对不起``)."""
_CLAUSE_END = re.compile(r"[,;.!?:\n，。；！？：、؟]")
_QUESTION_MARKS = "?？؟"


def _doubted(rest: str, lang: AnswerLanguage) -> str | None:
    """Why the clause after a label questions or denies it (the rule name), or None.

    The clause runs to the first punctuation (an ellipsis does not end it) or reason word: a
    question mark ending it (``True? No.``), a question or hedge word (``Верно ли это``) or a
    negation (``Wahr ist das nicht``, ``False is not the answer``) in it takes the label back.
    """
    rest = re.sub(r"\.{2,}|…", " ", rest)
    end = _CLAUSE_END.search(rest)
    clause = rest[:end.start()] if end else rest
    reason = re.search(_alternation(lang.reasons), clause, re.I) if lang.reasons else None
    if reason:
        clause = clause[:reason.start()]
    elif end and end.group() in _QUESTION_MARKS:
        return "questioned-label"
    if lang.questions and re.search(_alternation(lang.questions), clause, re.I):
        return "questioned-label"
    if lang.negations and re.search(_alternation(lang.negations), clause, re.I):
        return "negated-label"
    return None


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
    """Whether ``text`` names a label (``words``: the label alternation, ``_alternation``)."""
    return re.search(words, text, re.I) is not None


def _phrase(lang: AnswerLanguage, label: str) -> str:
    """The answer-phrase pattern: a cue, up to 20 characters, a copula or ``:``/``=``, quotes, a ``label``."""
    if lang == ENGLISH:  # byte for byte the pattern English answers were always parsed with
        return (r"\b(?:answer|label|judg(?:e)?ment|relation|prediction|output)\b[^.\n]{0,20}?(?:is|:|=)\s*[\"'*`]*"
                + label)
    cues = "|".join(("" if _UNSPACED.match(c[:1]) else r"\b") + re.escape(c)
                    + ("" if _UNSPACED.match(c[-1:]) else r"\b") for c in lang.cues)
    copulas = "|".join(map(re.escape, (*lang.copulas, ":", "=")))
    return rf"(?:{cues})[^{re.escape(lang.gap)}]{{0,20}}?(?:{copulas})\s*[{re.escape(lang.quotes)}]*{label}"


def parse_label(
    text: str,
    labels: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    json_key: str = "label",
    lang: AnswerLanguage = ENGLISH,
) -> tuple[str, dict[str, Any]]:
    """Map a model answer to one of ``labels``.

    Args:
        text: The answer text (a reasoning model's thinking already separated from it).
        labels: The label vocabulary, e.g. ``("True", "False", "Unknown")``.
        aliases: Extra surface forms mapped to labels, e.g. ``{"entailment": "0"}`` or the
            prompt language's label words (``{"对": "True"}``).
        json_key: The key holding the label in a JSON answer.
        lang: The language of the prompt and its answers (cue words, copulas, normalisation).

    Returns:
        ``(label or UNPARSED, detail)``; ``detail`` holds the parsed JSON object, if any, and
        under ``rule`` the name of the rule that decided (``lingdiag inspect`` counts them):
        ``json``, ``json-field``, ``whole-answer``, ``leading-label``, ``answer-phrase``,
        ``last-line``, or for unparsed answers ``phrase-then-label``, ``negated-phrase``,
        ``questioned-label`` and ``negated-label`` (a label its own clause questions or denies:
        ``True? No.``, ``Wahr ist das nicht``) and ``no-label``; for a language other than
        English, ``language`` and ``normalisation``.
    """
    label, detail = _parse(text, labels, aliases or {}, json_key, lang)
    return label, {**detail, **lang.recorded()}


def _parse(text: str, labels: Sequence[str], aliases: Mapping[str, str], json_key: str,
           lang: AnswerLanguage) -> tuple[str, dict[str, Any]]:
    """``parse_label`` without the language's record."""
    nfkc = (lambda t: unicodedata.normalize("NFKC", t)) if lang.nfkc else (lambda t: t)
    text = nfkc(text)

    def norm(t: str) -> str:
        return _norm(t, lang.strip)

    table = {norm(nfkc(lab)): lab for lab in labels}
    table.update({norm(nfkc(k)): v for k, v in aliases.items()})
    named = _alternation(table)
    detail: dict[str, Any] = {}

    obj = extract_json(text)
    if obj is not None:
        detail["json"] = obj
        value = obj.get(json_key)
        if isinstance(value, (str, int)) and norm(str(value)) in table:
            return table[norm(str(value))], {**detail, "rule": "json"}
    m = re.search(rf'"{re.escape(json_key)}"\s*:\s*"?([^",}}\n]+)', text)
    if m and norm(m.group(1)) in table and not _names_label(text[m.end():], named):
        return table[norm(m.group(1))], {**detail, "rule": "json-field"}

    body = _FENCE.sub(lambda mm: mm.group(1), text).strip()
    if norm(body) in table:
        return table[norm(body)], {**detail, "rule": "whole-answer"}
    # A label in an unspaced script is a word only before punctuation, a space, the end or a particle.
    bounded = _alternation(table, before=False, after=lang.particles)
    first = re.match(rf"[\s{re.escape(lang.quotes)}(\[]*" + bounded, body, re.I)
    doubt = None
    if first:
        label = table[first.group(1).lower()]
        # "True or False? ..." names several labels in its first line: not an answer.
        rest = body.splitlines()[0][first.end():]
        others = {label} | {table[w.lower()] for w in re.findall(named, rest, re.I)}
        doubt = _doubted(body[first.end():], lang)  # "True? No.", "Wahr ist das nicht."
        if others == {label} and not doubt:
            return label, {**detail, "rule": "leading-label"}
    phrases = list(re.finditer(_phrase(lang, bounded), body, re.I))
    if phrases:
        # The last such phrase is the answer, unless a label follows it: "Answer: True. Actually
        # False." and an echoed schema ("label": "True / False / Unknown") are not one label.
        last = phrases[-1]
        if _names_label(body[last.end():], named):
            return UNPARSED, {**detail, "rule": "phrase-then-label"}
        if lang.negations and re.search(_alternation(lang.negations), body[last.start():last.start(1)], re.I):
            return UNPARSED, {**detail, "rule": "negated-phrase"}  # "答案不是对", "Die Antwort ist nicht wahr"
        doubt = _doubted(body[last.end():], lang)  # "The answer is True or not"
        if doubt:
            return UNPARSED, {**detail, "rule": doubt}
        return table[last.group(1).lower()], {**detail, "rule": "answer-phrase"}
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if lines and norm(lines[-1]) in table:
        return table[norm(lines[-1])], {**detail, "rule": "last-line"}
    return UNPARSED, {**detail, "rule": doubt or "no-label"}
