"""CxNLI loaders on the released file layout and on broken variants of it."""

import csv
from collections import Counter
from pathlib import Path

import pytest

from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.registry import load_plugins
from lingdiag.suites.cxnli import data

EXP1_TEST = Path("cxnli/CxNLI/CxNLI_3_examples_test.tsv")
EXP2_TEST = Path("cxnli/CxNLI_distinction/CxNLI_distinction_test.tsv")

# Released file → number of triples. The paper's Table 7 reports 435 (Exp 1) and 99 (Exp 2);
# the release holds 390 and 100 test triples (see the suite's notes).
RELEASED = {
    "cxnli/CxNLI/CxNLI_3_examples_test.tsv": 390,
    "cxnli/CxNLI/CxNLI_1_example_train.csv": 24,
    "cxnli/CxNLI/CxNLI_3_examples_train.csv": 72,
    "cxnli/CxNLI/SNLI_1_example_train.csv": 3,
    "cxnli/CxNLI/SNLI_3_examples_train.csv": 9,
    "cxnli/CxNLI_distinction/CxNLI_distinction_test.tsv": 100,
    "cxnli/CxNLI_distinction/CxNLI_1_example_train_CxNLI_distinction_train.csv": 24,
    "cxnli/CxNLI_distinction/CxNLI_distinction_train.tsv": 14,
}
# The subsets the authors ran o1-preview on (their README): 104 + 16 Exp 1 triples (6 in
# both files), 10 Exp 2 triples; the 16-triple file comes as CSV and TSV.
O1 = {
    "cxnli/o1-preview/CxNLI_3_examples_test104.csv": 104,
    "cxnli/o1-preview/CxNLI_3_examples_test16.csv": 16,
    "cxnli/o1-preview/CxNLI_3_examples_test16.tsv": 16,
    "cxnli/o1-preview/CxNLI_distinction_test10.csv": 10,
}


def released_triples(path: Path) -> list[tuple[str, str, str, str, str, str]]:
    """The file read independently of the loader, with the csv module: (number, CxN Type,
    premise, hypothesis, relation cell, label) per three rows (premise, hypothesis, relation;
    the premise row's P/H/R cell has typos such as ``Premi``)."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f, delimiter="\t" if path.suffix == ".tsv" else ",") if any(c.strip() for c in r)]
    body = rows[1:]
    assert len(body) % 3 == 0
    out = []
    for p, h, r in zip(body[::3], body[1::3], body[2::3], strict=True):
        assert p[1].strip() == h[1].strip() == r[1].strip() and r[2].strip() == "relation"
        out.append((r[1].strip(), p[0], p[3], h[3], r[3], data.LABELS[int(r[3].split()[0])]))
    return out


@pytest.mark.parametrize("rel,n", {**RELEASED, **O1}.items())
def test_every_released_file_loads_with_its_exact_content(shared_datasets: Path, rel: str, n: int) -> None:
    triples = data.read_triples(shared_datasets / rel)
    assert len(triples) == n and len({t.number for t in triples}) == n
    loaded = [(t.number, *t.raw, t.label) for t in triples]
    assert loaded == released_triples(shared_datasets / rel)
    assert [(t.premise, t.hypothesis) for t in triples] == [(x[2].strip(), x[3].strip()) for x in loaded]


def test_exp1_test_file_structure(shared_datasets: Path) -> None:
    triples = data.read_triples(shared_datasets / EXP1_TEST)
    first = triples[0]
    assert (first.number, first.construction, first.label, first.line) == ("4", "let-alone", "neutral", 2)
    assert first.hypothesis == "If an individual is consistent, a society might also be consistent."
    assert triples[1].line == 5  # three rows per triple after the header
    assert Counter(t.construction for t in triples) == {
        "conative": 78, "intransitive-motion": 69, "resultative": 66, "causative-with": 54, "caused-motion": 36,
        "way-manner": 33, "comparative-correlative": 30, "let-alone": 24}
    assert Counter(t.label for t in triples) == {"entailment": 130, "neutral": 130, "contradiction": 130}


def test_exp2_items_take_their_table10_construction(shared_datasets: Path) -> None:
    triples = data.read_triples(shared_datasets / EXP2_TEST)
    items = data.to_items(triples, exp="2")
    assert Counter(it.tags["construction"] for it in items) == {
        "depictive": 20, "intransitive-at": 20, "ditransitive-np-pp": 20, "intransitive-to": 20, "transitive-with": 20}
    first = items[0]
    assert first.id == "e2-1" and first.gold == "entailment"
    assert first.tags["schema"] == "resultative" and first.tags["exp"] == "2"
    assert first.tags["columns"] == {"Original Agr?": "Y"}  # extra columns are kept
    assert Counter(it.gold for it in items) == {"contradiction": 49, "entailment": 30, "neutral": 21}


def test_one_example_files_are_the_first_premise_of_the_three_example_files(shared_datasets: Path) -> None:
    three = data.to_pool(data.read_triples(shared_datasets / "cxnli/CxNLI/CxNLI_3_examples_train.csv"))
    one = data.to_pool(data.read_triples(shared_datasets / "cxnli/CxNLI/CxNLI_1_example_train.csv"))
    def content(pool: data.Pool) -> dict[str, list[tuple[str, str, str, str]]]:
        return {k: [(t.number, t.premise, t.hypothesis, t.label) for t in v] for k, v in pool.items()}

    assert content(data.first_premise(three)) == content(one)
    assert sorted(one) == sorted(c for c in data.CONSTRUCTIONS if data.CONSTRUCTIONS[c].exp == "1")


def test_fetch_from_shared_folder_then_load_official(shared_datasets: Path) -> None:
    from lingdiag.suites.cxnli.files import load

    load_plugins()
    paths = fetch_mod.fetch("cxnli", str(shared_datasets))
    assert [p.relative_to(fetch_mod.datasets_dir()).as_posix() for p in paths] == [*RELEASED, *O1]
    ds = load("official")
    assert Counter(it.tags["exp"] for it in ds.items) == {"1": 390, "2": 100}
    assert len(ds.source) == len(RELEASED)
    assert len(ds.extras["pools"]["2"]["three-cxnli"]["resultative"]) == 9
    assert list(ds.extras["pools"]["1"]["one-snli"]) == [data.NONE]
    # The distinction train file is kept but would leak: all of its triples are Exp 2 test items.
    test_pairs = {(it.fields["premise"], it.fields["hypothesis"]) for it in ds.items if it.tags["exp"] == "2"}
    leaked = [t for ts in ds.extras["distinction_train"].values() for t in ts]
    assert len(leaked) == 14 and all((t.premise, t.hypothesis) in test_pairs for t in leaked)


@pytest.mark.parametrize("spec,exp1,exp2", [
    ("official-o1", 120, 10), ("official-o1-104", 104, 10), ("official-o1-16", 16, 10)])
def test_o1_preview_subsets_load_with_the_documented_counts(shared_datasets: Path, spec: str, exp1: int,
                                                            exp2: int) -> None:
    from lingdiag.suites.cxnli.files import load

    load_plugins()
    fetch_mod.fetch("cxnli", str(shared_datasets))
    ds = load(spec)
    assert Counter(it.tags["exp"] for it in ds.items) == {"1": exp1, "2": exp2}
    assert len({it.id for it in ds.items}) == exp1 + exp2
    full = {(it.fields["premise"], it.fields["hypothesis"], it.gold) for it in load("official").items}
    exp1_items = [it for it in ds.items if it.tags["exp"] == "1"]
    assert all((it.fields["premise"], it.fields["hypothesis"], it.gold) in full for it in exp1_items)
    # Examples and raw cells for the authors' prompts come with the subset too.
    assert set(ds.extras["raw"]) == {it.id for it in ds.items}
    assert len(ds.extras["authors_pools"]["2"]["three-cxnli"]) == 72


@pytest.mark.parametrize("where", ["cxnli", "."])
def test_load_a_directory_in_the_release_layout(shared_datasets: Path, where: str) -> None:
    from lingdiag.suites.cxnli.files import load

    ds = load(str(shared_datasets / where))
    assert len(ds.items) == 490


def test_official_before_fetch_says_how_to_fetch() -> None:
    from lingdiag.suites.cxnli.files import load

    with pytest.raises(DatasetError, match="lingdiag data fetch cxnli"):
        load("official")


# -- broken variants -------------------------------------------------------------------

HEADER = "CxN Type\tNumber\tP/H/R\tAnnotation Targets - Gold Standard Relation\n"


def triple(cxn: str, n: int, premise: str = "He hammered the metal flat.",
           hypothesis: str = "The metal became flat.", relation: str = "0 (entailment)") -> str:
    return f"{cxn}\t{n}\tpremise\t{premise}\n\t{n}\thypothesis\t{hypothesis}\n\t{n}\trelation\t{relation}\n"


def write(tmp_path: Path, text: str, name: str = "t.tsv", bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.replace("\n", "\r\n").encode())
    return path


def test_bom_crlf_extra_columns_typo_and_blank_lines_are_accepted(tmp_path: Path) -> None:
    text = (HEADER.replace("\n", "\tOriginal Agr?\tChanged?\n")
            + "resultative\t1\tPremi\tHe hammered the metal flat.\tY\t\n"
            + "\t1\thypothesis\tThe metal became flat.\t\t\n\n"
            + "\t1\trelation\t0\t\t\n" + triple("causative-with-CxN", 2, relation="2 ( contradiction )"))
    triples = data.read_triples(write(tmp_path, text, bom=True))
    assert [(t.number, t.construction, t.label) for t in triples] == [
        ("1", "resultative", "entailment"), ("2", "causative-with", "contradiction")]
    assert triples[0].columns == {"Original Agr?": "Y"}
    assert triples[1].line == 6  # line numbers count the blank line


def test_released_file_with_a_bom_loads_the_same(shared_datasets: Path, tmp_path: Path) -> None:
    raw = (shared_datasets / EXP1_TEST).read_bytes()
    path = tmp_path / "bom.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + raw)
    assert data.read_triples(path) == data.read_triples(shared_datasets / EXP1_TEST)


def broken_release(shared_datasets: Path, tmp_path: Path, edit: dict[int, str | None]) -> Path:
    """The Exp 1 test file with lines replaced (None deletes the line); line 1 is the header."""
    lines = (shared_datasets / EXP1_TEST).read_bytes().decode("utf-8").split("\r\n")
    out = [edit.get(k, line) for k, line in enumerate(lines, 1)]
    return write(tmp_path, "\n".join(x for x in out if x is not None))


def test_every_malformed_triple_is_reported_with_lines_and_number(shared_datasets: Path, tmp_path: Path) -> None:
    path = broken_release(shared_datasets, tmp_path, {
        6: None,                                          # Number 5 loses its hypothesis
        13: "\t7\trelation\t3 (neutral)",                 # no such code
        16: "\t8\trelation\t0 (neutral)",                 # code and name disagree
        17: "\t9\tpremise\tIt is difficult enough.",      # construction missing
        20: "frobnicate\t10\tpremise\tSome premise.",     # unknown construction
    })
    with pytest.raises(DatasetError) as e:
        data.read_triples(path)
    msg = str(e.value)
    # Line numbers are those of the broken file (one line shorter after Number 5).
    assert msg.startswith(f"{path}: 5 malformed triple(s):")
    assert "lines 5-6 (Number 5): expected 3 rows premise/hypothesis/relation, found 2: premise/relation" in msg
    assert "lines 10-12 (Number 7): relation '3 (neutral)' is not 0, 1 or 2" in msg
    assert "lines 13-15 (Number 8): relation '0 (neutral)': code 0 means entailment" in msg
    assert "lines 16-18 (Number 9): no construction (CxN Type) on the premise row" in msg
    assert "lines 19-21 (Number 10): unknown construction 'frobnicate'" in msg


@pytest.mark.parametrize("text,expected", [
    (HEADER + triple("resultative", 1) + triple("resultative", 2) + triple("resultative", 1),
     "lines 8-10 (Number 1): Number 1 already used at line 2"),
    (HEADER + triple("resultative", 1, premise=""), "lines 2-4 (Number 1): empty premise text"),
    (HEADER + triple("resultative", 1).replace("\t1\thypothesis", "conative\t1\thypothesis"),
     "line 3 names another construction 'conative'"),
    (HEADER + triple("resultative", 1).replace("hypothesis\tThe metal became flat.", "hypothesis\tx\textra"),
     "more cells than header columns"),
    (HEADER + triple("resultative", 1) + triple("resultative", 1),
     "lines 2-7 (Number 1): expected 3 rows premise/hypothesis/relation, found 6"),
])
def test_broken_variants(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(DatasetError, match="malformed") as e:
        data.read_triples(write(tmp_path, text))
    assert expected in str(e.value)


def test_missing_column_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"row 1: missing column\(s\) 'p/h/r'"):
        data.read_triples(write(tmp_path, "CxN Type\tNumber\tAnnotation Targets - Gold Standard Relation\n"))
    with pytest.raises(DatasetError, match="empty file"):
        data.read_triples(write(tmp_path, "", name="e.tsv"))
    with pytest.raises(DatasetError, match="cannot read"):
        data.read_triples(tmp_path / "absent.tsv")


def test_csv_and_test_items_reject_misplaced_constructions(tmp_path: Path) -> None:
    text = HEADER.replace("\t", ",") + "let-alone,1,premise,\"A, let alone B.\"\n,1,hypothesis,B.\n,1,relation,1\n"
    (t,) = data.read_triples(write(tmp_path, text, name="x.csv"))
    assert t.premise == "A, let alone B." and t.label == "neutral"
    with pytest.raises(DatasetError, match="let-alone has no Exp 2 counterpart"):
        data.to_items([t], exp="2")
    depictive = data.Triple("1", "depictive", "p", "h", "neutral", 2)
    with pytest.raises(DatasetError, match="Exp 2 construction in an Exp 1 file"):
        data.to_items([depictive], exp="1")
    assert data.to_items([depictive], exp=None)[0].tags["exp"] == "2"
