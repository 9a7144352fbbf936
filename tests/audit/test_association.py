"""PMI and LMI on a corpus the test writes, against a table computed by hand."""

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lingdiag.audit.stats import compare_classes
from lingdiag.cli import app
from lingdiag.metrics.stats import holm

runner = CliRunner()

# N = 8 lines. Unit frequencies (lines holding the lemma): dog 3, bark 2, loud 2, run 2,
# cat 2, sleep 1, bird 2, sing 2, rain 1, fall 1.
CORPUS = """dog bark
dog bark loud
dog run
cat run
cat sleep
bird sing
bird sing loud
rain fall
"""
ITEMS = """id,first,second,label
i1,A dog.,It barked.,A
i2,A cat.,Something ran.,A
i3,Birds sang.,It was loud.,B
i4,Rain fell.,A dog ran.,B
i5,The dog ran.,A cat slept.,B
"""
L = math.log2(16 / 6)
# Hand-computed, PMI = log2(f(x,y) · N / (f(x) f(y))), LMI = f(x,y) · PMI:
#   i1 dog|bark: f=2, log2(2·8/(3·2)) = log2(8/3) = 1.415037; LMI 2 · 1.415037 = 2.830075
#   i2 cat|run:  f=1, log2(1·8/(2·2)) = 1;                      LMI 1
#   i3 bird|loud and sing|loud: f=1 each, log2(8/4) = 1 each;   mean PMI 1, LMI 1
#   i4 rain, fall | dog, run: no pair co-occurs                 → unscored (4 pairs, 0 scored)
#   i5 dog, run | cat, sleep: only run|cat co-occurs (line 4), log2(8/4) = 1 → PMI 1, LMI 1
EXPECTED = {"i1": (L, 2 * L, 1, 1), "i2": (1.0, 1.0, 1, 1), "i3": (1.0, 1.0, 2, 2),
            "i4": (None, None, 4, 0), "i5": (1.0, 1.0, 4, 1)}


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    return tmp_path / "corpus.txt", tmp_path / "items.csv"


def scores_of(csv_path: Path) -> dict[str, tuple[Any, ...]]:
    rows = [line.split(",") for line in csv_path.read_text().splitlines()[1:]]
    return {r[0]: (float(r[2]) if r[2] else None, float(r[3]) if r[3] else None, int(r[4]), int(r[5])) for r in rows}


def assert_table(got: dict[str, tuple[Any, ...]]) -> None:
    assert set(got) == set(EXPECTED)
    for k, (pmi, lmi, n, scored) in EXPECTED.items():
        assert got[k][2:] == (n, scored), k
        if pmi is None:
            assert got[k][:2] == (None, None), k
        else:
            assert got[k][0] == pytest.approx(pmi, abs=1e-6) and got[k][1] == pytest.approx(lmi, abs=1e-6), k


def test_pmi_lmi_from_a_corpus_match_the_hand_table(files, tmp_path):
    corpus, items = files
    out = tmp_path / "scores.csv"
    r = runner.invoke(app, ["data", "audit", str(items), "--by", "label", "--corpus", str(corpus),
                            "--items-out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert_table(scores_of(out))
    report = json.loads(r.stdout)
    assert report["lemmatizer"] == "builtin" and report["corpus_units"] == 8
    assert report["association"]["pmi"]["A"]["mean"] == pytest.approx((L + 1) / 2)
    assert report["association"]["pmi"]["B"] == {"n": 3, "n_unscored": 1, "mean": 1.0, "median": 1.0}
    assert [(p["measure"], p["a"], p["b"]) for p in report["pairs"]] == [("pmi", "A", "B"), ("lmi", "A", "B")]


def test_a_counts_file_gives_the_same_table(files, tmp_path):
    _, items = files
    counts = tmp_path / "counts.tsv"
    counts.write_text("lemma1\tlemma2\tcount\n*\t*\t8\ndog\t*\t3\nbark\t*\t2\ncat\t*\t2\nrun\t*\t2\nbird\t*\t2\n"
                      "sing\t*\t2\nloud\t*\t2\nsleep\t*\t1\nrain\t*\t1\nfall\t*\t1\nbark\tdog\t2\nrun\tcat\t1\n"
                      "bird\tloud\t1\nloud\tsing\t1\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    r = runner.invoke(app, ["data", "audit", str(items), "--by", "label", "--counts", str(counts),
                            "--items-out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert_table(scores_of(out))


def test_a_bad_counts_row_is_one_line_naming_row_and_field(files, tmp_path):
    _, items = files
    counts = tmp_path / "counts.tsv"
    counts.write_text("lemma1\tlemma2\tcount\n*\t*\t8\ndog\t*\tmany\n", encoding="utf-8")
    r = runner.invoke(app, ["data", "audit", str(items), "--by", "label", "--counts", str(counts)])
    assert r.exit_code != 0
    assert "row 3" in str(r.exception) and "'count'" in str(r.exception)


def test_holm_adjustment_and_pairwise_verdicts():
    # sorted p 0.01, 0.03, 0.04 → 3·0.01 = 0.03, 2·0.03 = 0.06, max(0.06, 1·0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    omni, tests = compare_classes("pmi", {"a": [1, 2, 3, 4, 5, 6], "b": [11, 12, 13, 14, 15, 16],
                                          "c": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]})
    assert omni is not None and omni.verdict == "differ"
    verdicts = {(t.a, t.b): (t.verdict, t.rank_biserial) for t in tests}
    assert verdicts[("a", "b")] == ("differ", -1.0)
    assert verdicts[("a", "c")][0] == "no significant difference"


def test_lexical_frequency_from_the_corpus_bins_items_at_quartiles(files):
    corpus, items = files
    r = runner.invoke(app, ["data", "audit", str(items), "--by", "label", "--corpus", str(corpus),
                            "--lexical-frequency", "corpus", "--json"])
    assert r.exit_code == 0, r.output
    lex = json.loads(r.stdout)["lexical"]
    # Mean unit frequency of each item's lemmas: i1 (3+2)/2 = 2.5, i2 2, i3 2, i4 (1+1+3+2)/4 = 1.75,
    # i5 (3+2+2+1)/4 = 2; quartiles of [1.75, 2, 2, 2, 2.5] are all 2, so only i4 is below Q1.
    assert lex["quartiles"] == [2.0, 2.0, 2.0]
    assert lex["items"] == {"Rare": {"A": 0, "B": 1}, "Uncommon": {"A": 0, "B": 0}, "Common": {"A": 0, "B": 0},
                            "Frequent": {"A": 2, "B": 2}}


def test_lexical_frequency_from_wordfreq_separates_common_from_rare_words(tmp_path):
    pytest.importorskip("wordfreq", reason="wordfreq (the audit extra) is not installed")
    common = ["The man ate food.", "The woman saw a house.", "The child went home.", "The people had time."]
    rare = ["The ptarmigan moulted.", "The sommelier decanted claret.", "The farrier shod geldings.",
            "The cooper caulked casks."]
    rows = [f"c{i},{s},{s},common" for i, s in enumerate(common)] + [f"r{i},{s},{s},rare" for i, s in enumerate(rare)]
    path = tmp_path / "items.csv"
    path.write_text("id,first,second,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["data", "audit", str(path), "--by", "label", "--lexical-frequency", "wordfreq", "--json"])
    assert r.exit_code == 0, r.output
    lex = json.loads(r.stdout)["lexical"]
    low = lex["items"]["Rare"]["rare"] + lex["items"]["Uncommon"]["rare"]
    high = lex["items"]["Common"]["common"] + lex["items"]["Frequent"]["common"]
    assert (low, high) == (4, 4)
