"""Hostile input on the human-study surfaces: formula injection in every CSV written, rater ids
printed as plain text, lone surrogates, strict ratings, unwritable outputs, nothing kept."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag as run_lingdiag

from lingdiag.human import Study
from lingdiag.io.tabular import FORMULA_START

HOSTILE_RATER = "=HYPERLINK(\"http://evil.example\")[link=http://evil.example]click[/link]\x1b[2J"


def hostile_dataset(path: Path) -> Path:
    """ImperfectiveNLI rows whose text opens with formula characters and holds lone surrogates."""
    rows = [{"id": "A_1", "group": "A", "verb_class": "Creation", "verb": "build",
             "premise": '=HYPERLINK("http://evil.example","x") was building \ud800.', "hypothesis": "It was built.",
             "label": "False"},
            {"id": "B_1", "group": "B", "verb_class": "Activity", "verb": "run",
             "premise": "-2+3 the athletes were running\x00.", "hypothesis": "@SUM(1) ran \udc00.", "label": "True"},
            {"id": "D_1", "group": "D", "verb_class": "Activity", "verb": "run",
             "premise": "+1 the athletes were running.", "hypothesis": "\tThey ran.", "label": "True"}]
    path.write_text(json.dumps(rows))  # "\ud800" escaped: valid JSON
    return path



def lingdiag(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_lingdiag(cwd, *args, inherit=True)


def cells(path: Path) -> list[str]:
    return [c for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))) for c in row]


def assert_no_formula(values: list[str]) -> None:
    for v in values:
        assert v == "" or v[0] not in FORMULA_START or v.lstrip("+-").replace(".", "").isdigit(), v
        assert "\x00" not in v


@pytest.fixture()
def study(tmp_path: Path) -> Path:
    proc = lingdiag(tmp_path, "human", "export", "imperfective", "--dataset", str(hostile_dataset(tmp_path / "d.json")),
                    "--attention", "1", "--out", "study")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return tmp_path / "study"


def test_export_neutralises_formulas_and_replaces_surrogates(study: Path) -> None:
    platform = cells(study / "platform.csv")
    assert_no_formula(platform)
    assert any(c.startswith("'=HYPERLINK(") for c in platform) and any(c.startswith("'-2+3") for c in platform)
    for name in ("study.json", "form.html", "platform.csv"):
        text = (study / name).read_text(encoding="utf-8")  # valid UTF-8: the surrogates became U+FFFD
        assert "\ufffd" in text or "\\ufffd" in text, name


def answers(study: Path, path: Path, rater: str, rating: str = "4", *, fails: str | None = None) -> Path:
    """``rater`` rates every real stimulus ``rating`` and passes the attention check; ``fails``
    (another rater) misses it."""
    st = Study.read(study / "study.json")
    by_id = {s.id: s for s in st.stimuli}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater", "stimulus", "rating"])
        for who in [rater, *([fails] if fails else [])]:
            for sid in st.lists[0]:
                expected = by_id[sid].expected
                value = rating if expected is None else str(expected["rating"] % 7 + 1 if who == fails
                                                            else expected["rating"])
                w.writerow([who, sid, value])
    return path


def test_rater_ids_print_as_plain_text(study: Path, tmp_path: Path) -> None:
    # Missing the attention check puts the id on the terminal: shown literally, not as a link or an escape.
    path = answers(study, tmp_path / "a.csv", "P1", fails=HOSTILE_RATER)
    proc = lingdiag(tmp_path, "human", "import", "study/study.json", str(path), "--gold", "argmax")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr
    assert '=HYPERLINK("http://evil.example")[link=http://evil.example]click[/link]\\x1b[2J' in proc.stdout


def test_a_rater_id_in_a_message_is_escaped(study: Path, tmp_path: Path) -> None:
    st = Study.read(study / "study.json")
    path = tmp_path / "a.csv"
    path.write_text(f"rater,stimulus,rating\n\"{HOSTILE_RATER}\",{st.lists[0][0]},abc\n", encoding="utf-8")
    proc = lingdiag(tmp_path, "human", "import", "study/study.json", str(path))
    assert proc.returncode == 2 and "\x1b" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("rating", ["1_0", "\uff15", "inf", "nan", "4e0x", "0x4"])
def test_ratings_that_float_would_read_are_refused(study: Path, tmp_path: Path, rating: str) -> None:
    path = answers(study, tmp_path / "a.csv", "P1", rating)
    proc = lingdiag(tmp_path, "human", "import", "study/study.json", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert ", field 'rating': expected a number" in proc.stderr


def test_import_neutralises_the_gold_file_and_it_reads_back(study: Path, tmp_path: Path) -> None:
    path = answers(study, tmp_path / "a.csv", "=cmd|' /C calc'!A0")
    proc = lingdiag(tmp_path, "human", "import", "study/study.json", str(path), "--gold", "argmax",
                    "--out", "gold.csv", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["raters"] == ["=cmd|' /C calc'!A0"]  # the quote came off on reading
    assert_no_formula(cells(tmp_path / "gold.csv"))


def test_import_keeping_no_rater_exits_non_zero(study: Path, tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("rater,stimulus,rating\n", encoding="utf-8")
    proc = lingdiag(tmp_path, "human", "import", "study/study.json", str(path), "--out", "gold.csv")
    assert proc.returncode == 2 and "no rater kept" in proc.stderr, proc.stderr
    assert not (tmp_path / "gold.csv").exists()


@pytest.mark.parametrize("command", ["export", "import"])
def test_unwritable_outputs_are_one_line_errors(study: Path, tmp_path: Path, read_only: Any, command: str) -> None:
    (tmp_path / "ro").mkdir()
    read_only(tmp_path / "ro")
    if command == "export":
        args = ["export", "imperfective", "--dataset", "d.json", "--out", "ro/study"]
    else:
        args = ["import", "study/study.json", str(answers(study, tmp_path / "a.csv", "P1")), "--gold", "argmax",
                "--out", "ro/gold.csv"]
    proc = lingdiag(tmp_path, "human", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: cannot write ro/") and len(proc.stderr.strip().splitlines()) == 1
