"""minimal-pairs reads SLING and CLAMS as published: detection, named formats, excluded pairs, languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_run
from lingdiag.records import LoglikelihoodRequest
from lingdiag.registry import load_plugins
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.suites.minimal_pairs.files import CLAMS_SHA256, SLING_SHA256, load
from lingdiag.suites.minimal_pairs.formats import IDENTICAL


def test_sling_as_published_with_identical_pairs_excluded(shared_datasets: Path) -> None:
    ds = load(str(shared_datasets / "sling"))
    zai_le = [e for e in ds.excluded if e.item_id.startswith("zai_le/")]
    cl = [e for e in ds.excluded if e.item_id.startswith("cl_simple_noun/")]
    assert (len(zai_le), len(cl), len(ds.excluded)) == (16, 4, 20)
    assert {e.reason for e in ds.excluded} == {IDENTICAL}
    assert len(ds.items) == 5000 - 20 and not {e.item_id for e in ds.excluded} & {it.id for it in ds.items}
    it = next(i for i in ds.items if i.id == "zai_le/0")
    assert it.fields["sentence_good"] == "他们在缴罚款了。"
    assert it.tags == {"UID": "zai_le", "linguistics_term": "Aspect", "field": "syntax", "language": "zh"}


def test_clams_languages_from_folders_and_hebrew_unchanged(shared_datasets: Path) -> None:
    ds = load(str(shared_datasets / "clams"))
    assert {str(it.tags["language"]) for it in ds.items} == {"de", "en", "fr", "he", "ru"}
    he = next(it for it in ds.items if it.id == "he/simple_agrmt/0")
    assert (he.fields["sentence_good"], he.fields["sentence_bad"]) == ("ה מלצר רוקד", "ה מלצר רוקדים")
    assert he.tags["UID"] == "he/simple_agrmt" and he.tags["linguistics_term"] == "simple_agrmt"
    assert len([it for it in ds.items if it.tags["UID"] == "fr/simple_agrmt"]) == 280


def test_named_format_and_undetermined_language(tmp_path: Path) -> None:
    f = tmp_path / "pairs.tsv"
    f.write_text("True\tthe cat sleeps\nFalse\tthe cat sleep\nFalse\tthe cat sleeping\nTrue\ta\nFalse\ta\n")
    ds = load(f"clams:{f}")
    assert [it.id for it in ds.items] == ["und/pairs/0", "und/pairs/1"]
    assert [(e.item_id, e.reason) for e in ds.excluded] == [("und/pairs/2", IDENTICAL)]
    assert load(str(f)).items == ds.items  # detected alike


@pytest.mark.parametrize(("text", "message"), [
    ('{"sentence_good": "A.", "sentence_bad": "B.", "id": 3}\n',
     r"p.jsonl, row 1: fits no minimal-pair format .*blimp: JSONL with .*sling: .*clams: lines True<TAB>sentence"),
    ('{"sentence_good": "A.", "paradigm": "x", "pair_ID": 0}\n', r"p.jsonl, row 1, field 'sentence_bad': missing"),
    ('{"sentence_good": "", "sentence_bad": 3, "UID": "x", "pairID": 0}\n',
     r"p.jsonl, row 1, field 'sentence_bad': not text: int"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(text)
    with pytest.raises(DatasetError, match=message) as e:
        load(str(f))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("text", "row"), [("True\ta b\nFalse a c\n", 2), ("False\ta\n", 1),
                                          ("True\ta\nMaybe\tb\n", 2)])
def test_clams_lines_out_of_order(tmp_path: Path, text: str, row: int) -> None:
    f = tmp_path / "t.txt"
    f.write_text(text)
    with pytest.raises(DatasetError, match=rf"t.txt, row {row}, field 'label'"):
        load(f"clams:{f}")


def _shorter_is_likelier(r: LoglikelihoodRequest) -> float:
    return -float(len(r.continuation))


def test_run_excludes_counts_and_reports_them(tmp_path: Path) -> None:
    sling = tmp_path / "data" / "zh.jsonl"
    sling.parent.mkdir()
    rows = [{"sentence_good": "他在吃饭。", "sentence_bad": "他在吃了饭。", "phenomenon": "Aspect",
             "paradigm": "zai_le", "pair_ID": 0, "field": "syntax"},
            {"sentence_good": "他在吃饭。", "sentence_bad": "他在吃饭。", "phenomenon": "Aspect", "paradigm": "zai_le",
             "pair_ID": 1, "field": "syntax"},
            {"sentence_good": "他吃了饭了。", "sentence_bad": "他吃饭了了了。", "phenomenon": "Aspect",
             "paradigm": "zai_le", "pair_ID": 2, "field": "syntax"}]
    sling.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    he = tmp_path / "data" / "he_evalset" / "simple_agrmt.txt"
    he.parent.mkdir()
    he.write_text("True\tה מלצר רוקד\nFalse\tה מלצר רוקדים\n", encoding="utf-8")
    config = RunConfig(suite="minimal-pairs", model="mock", dataset=str(tmp_path / "data"))
    result = run(config, tmp_path / "run", backend=MockBackend(loglik_fn=_shorter_is_likelier), cache=False)
    m = result.metrics["simple/lingdiag"]
    assert m["n"] == 3 and set(m["by_language"]) == {"he", "zh"} and m["by_language"]["zh"]["n"] == 2
    assert result.table.startswith("**Excluded items** (not interpretable, never scored): 1; "
                                   "good and bad sentences identical: 1 (zai_le/1)")
    assert "**Accuracy per language**" in result.table and "| he |" in result.table
    assert "> scoring policy `lingdiag` in a script without spaces: scores the text as written (zh)" in result.table
    meta = json.loads((result.out / "meta.json").read_text())
    assert meta["excluded"] == [{"item_id": "zai_le/1", "reason": IDENTICAL}]
    items = (result.out / "items.jsonl").read_text(encoding="utf-8")
    assert "zai_le/1" not in items and "ה מלצר רוקדים" in items
    runs = [load_run(result.out)]
    page = render_html(tables(runs), runs)
    section = page[page.index('id="not-interpretable"'):]
    assert "zai_le/1: good and bad sentences identical" in section[:section.index("</ul>", section.index("excluded"))]


def test_fetch_sling_and_clams_from_loopback(server: tuple[str, list[str]]) -> None:
    load_plugins()
    base, log = server
    assert all(f.url.startswith("https://raw.githubusercontent.com/Yixiao-Song/SLING_Data_Code/5a7f791")
               for f in fetch_mod.OFFICIAL["sling"])
    for name, only in (("sling", "zai_le"), ("clams", "simple_agrmt")):
        result = CliRunner().invoke(app, ["fetch", name, "--from", base, "--only", only])
        assert result.exit_code == 0, result.output
    assert sorted(log) == ["/clams/de_evalset/simple_agrmt.txt", "/clams/en_evalset/simple_agrmt.txt",
                           "/clams/fr_evalset/simple_agrmt.txt", "/clams/he_evalset/simple_agrmt.txt",
                           "/clams/ru_evalset/simple_agrmt.txt", "/sling/Aspect/zai_le.jsonl"]
    sling = load("sling")
    assert len(sling.items) == 984 and len(sling.excluded) == 16
    assert next(iter(sling.source.values())) == SLING_SHA256["Aspect/zai_le.jsonl"]
    clams = load("clams")
    assert len(clams.items) == 3 * 140 + 2 * 280 and set(clams.source.values()) <= set(CLAMS_SHA256.values())
    fetched = fetch_mod.datasets_dir() / "clams" / "he_evalset" / "simple_agrmt.txt"
    fetched.write_text("True\tchanged\nFalse\tchanged too\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["fetch", "clams", "--from", str(fetch_mod.datasets_dir()), "--only", "simple_agrmt"])
    assert bad.exit_code != 0 and "SHA-256 mismatch" in str(bad.exception)


def test_a_folder_skips_hidden_copies_and_a_duplicate_names_both_files(shared_datasets: Path, tmp_path: Path) -> None:
    """A Jupyter checkpoint copy of a paradigm is not read (it doubled the data); a real duplicate
    pair id names both files."""
    src = shared_datasets / "blimp" / "anaphor_gender_agreement.jsonl"
    folder = tmp_path / "pairs"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    (folder / "anaphor_gender_agreement.jsonl").write_bytes(src.read_bytes())
    (folder / ".ipynb_checkpoints" / "anaphor_gender_agreement-checkpoint.jsonl").write_bytes(src.read_bytes())
    (folder / ".backup.jsonl").write_bytes(src.read_bytes())
    n = len(src.read_text(encoding="utf-8").splitlines())
    assert len(load(str(folder)).items) == n
    (folder / "copy.jsonl").write_bytes(src.read_bytes())
    with pytest.raises(DatasetError, match="anaphor_gender_agreement.jsonl and in this file") as e:
        load(str(folder))
    assert "copy.jsonl" in str(e.value)


@pytest.mark.parametrize("name", ["sling", "clams"])
def test_one_prefix_without_one_prefix_pairs_is_one_line(shared_datasets: Path, tmp_path: Path, name: str) -> None:
    """Issue 44 item 9: it exited 0 with empty tables and no word why."""
    from lingdiag.errors import ConfigError

    config = RunConfig(suite="minimal-pairs", model="mock", dataset=str(shared_datasets / name), limit=4,
                       axes={"method": ["one-prefix"]})
    with pytest.raises(ConfigError, match=r"--method one-prefix: none of the \d+ pairs .* has one-prefix fields"):
        run(config, tmp_path / "run", backend=MockBackend(), cache=False)
    assert not (tmp_path / "run" / "table.md").exists()


def test_data_stats_names_the_pair_it_excluded(shared_datasets: Path, tmp_path: Path) -> None:
    """Issue 44 item 11: ``data stats`` said "1 items" without naming the pair a blank sentence excluded."""
    lines = (shared_datasets / "blimp" / "anaphor_gender_agreement.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    blank = {**json.loads(lines[1]), "sentence_bad": "  "}
    (tmp_path / "pairs.jsonl").write_text(lines[0] + "\n" + json.dumps(blank) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["data", "stats", "minimal-pairs", "--dataset", str(tmp_path / "pairs.jsonl")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "1 items" in text and f"1 excluded (not interpretable, never scored): anaphor_gender_agreement/" \
        f"{blank['pairID']}" in text
    as_json = json.loads(CliRunner().invoke(app, ["data", "stats", "minimal-pairs", "--dataset",
                                                  str(tmp_path / "pairs.jsonl"), "--json"]).output)
    assert [e["item_id"] for e in as_json["excluded"]] == [f"anaphor_gender_agreement/{blank['pairID']}"]
