"""The reader against its own corpus (``tests/parse/corpus/answers.jsonl``): answers written the
way chat models answer, in every built-in language, for labels (True/False/Unknown) and choice
letters (A-D), each with the label a careful reader gives or ``unparsed``.

Held: no label the answer did not give, at least 95% of the plain answers read, no exception; and
the figures per family in ``docs/reader.md`` are the ones the reader gives today.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lingdiag.parse.choice import read_letter
from lingdiag.parse.labels import LANGUAGES, language, parse_label
from lingdiag.records import UNPARSED

HERE = Path(__file__).parent / "corpus"
DOC = Path(__file__).resolve().parents[2] / "docs" / "reader.md"
VOCABULARIES = json.loads((HERE / "vocabularies.json").read_text(encoding="utf-8"))
ANSWERS: list[dict[str, Any]] = [json.loads(line) for line in
                                 (HERE / "answers.jsonl").read_text(encoding="utf-8").splitlines()]


def reading(answer: dict[str, Any]) -> str:
    lang = language(answer["lang"])
    if answer["vocab"] == "labels":
        return parse_label(answer["text"], VOCABULARIES["labels"], aliases=VOCABULARIES["aliases"][answer["lang"]],
                           lang=lang)[0]
    return read_letter(answer["text"], VOCABULARIES["options"][answer["lang"]], lang).label


READ = [reading(a) for a in ANSWERS]


def test_the_corpus_covers_every_language_and_both_vocabularies() -> None:
    assert len(ANSWERS) >= 300
    cells = Counter((a["lang"], a["vocab"]) for a in ANSWERS)
    assert set(cells) == {(code, vocab) for code in LANGUAGES for vocab in ("labels", "letters")}
    assert min(cells.values()) >= 15
    assert all(a["expect"] == UNPARSED or a["expect"] in (VOCABULARIES["labels"] if a["vocab"] == "labels"
                                                          else VOCABULARIES["options"][a["lang"]]) for a in ANSWERS)


def test_no_label_the_answer_did_not_give() -> None:
    wrong = [(a["lang"], a["text"], got) for a, got in zip(ANSWERS, READ, strict=True)
             if got != UNPARSED and got != a["expect"]]
    assert wrong == []


def test_plain_answers_are_read() -> None:
    plain = [(a, got) for a, got in zip(ANSWERS, READ, strict=True) if a["plain"]]
    lost = [a["text"] for a, got in plain if got != a["expect"]]
    assert len(plain) - len(lost) >= 0.97 * len(plain), lost


def figures() -> str:
    """The table of ``docs/reader.md``: per family, answers, wrong labels, plain answers read."""
    rows: dict[str, list[int]] = {}
    for a, got in zip(ANSWERS, READ, strict=True):
        row = rows.setdefault(a["family"], [0, 0, 0, 0])
        row[0] += 1
        row[1] += got != UNPARSED and got != a["expect"]
        row[2] += a["plain"]
        row[3] += a["plain"] and got == a["expect"]
    lines = ["| Family | Answers | Wrong labels | Plain answers read |", "|---|---|---|---|"]
    for family, (n, wrong, plain, read) in sorted(rows.items()):
        lines.append(f"| {family} | {n} | {wrong} | {f'{read} of {plain}' if plain else '—'} |")
    n, wrong, plain, read = (sum(r[k] for r in rows.values()) for k in range(4))
    lines.append(f"| **all** | {n} | {wrong} | {read} of {plain} ({read / plain:.1%}) |")
    return "\n".join(lines)


def test_the_docs_give_todays_figures() -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index("<!-- corpus figures -->\n") + len("<!-- corpus figures -->\n"), text.index(
        "\n<!-- end corpus figures -->")
    assert text[start:end] == figures(), "docs/reader.md: paste the table `python tests/parse/test_corpus.py` prints"


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_every_language_reads_its_plain_answers(code: str) -> None:
    plain = [(a, got) for a, got in zip(ANSWERS, READ, strict=True) if a["plain"] and a["lang"] == code]
    assert sum(got == a["expect"] for a, got in plain) >= 0.9 * len(plain)


if __name__ == "__main__":
    print(figures())
