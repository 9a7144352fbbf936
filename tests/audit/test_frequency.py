"""Frequency bins of ExpliCa's official data and its published per-row frequency file: Table 3."""

import json
from pathlib import Path

from typer.testing import CliRunner

from lingdiag.audit.frequency import quartile_bins
from lingdiag.cli import app
from lingdiag.io.fetch import fetch
from lingdiag.registry import load_plugins

runner = CliRunner()

# ExpliCa App. C, Table 3: sentences per frequency bin; columns C. Ic., C. a.Ic., T. Ic., T. a.Ic., Unrel.
TABLE_3 = {"Rare": (214, 241, 239, 164, 303), "Uncommon": (244, 244, 295, 174, 282),
           "Common": (173, 205, 272, 169, 380), "Frequent": (189, 186, 234, 149, 443)}
COLUMNS = ("causal_iconic", "causal_anti-iconic", "temporal_iconic", "temporal_anti-iconic", "unrelated")


def test_quartile_bins_are_left_closed_at_each_quartile():
    quartiles, bins = quartile_bins([0, 4, 5, 56, 57, 498, 499, 10_000])
    assert quartiles == (4.75, 56.5, 498.25)
    assert bins == ["Rare", "Rare", "Uncommon", "Uncommon", "Common", "Common", "Frequent", "Frequent"]


def test_official_explica_with_its_frequency_file_gives_table_3(shared_datasets: Path, tmp_path: Path):
    load_plugins()
    fetch("explica", str(shared_datasets))
    freq = shared_datasets / "explica" / "explica_freq_4800.tsv"
    png = tmp_path / "fig2.png"
    r = runner.invoke(app, ["data", "audit", "explica", "--dataset", "official", "--frequencies", str(freq), "--json",
                            "--figure", str(png)])
    assert r.exit_code == 0, r.output
    f = json.loads(r.stdout)["frequency"]
    assert {b: tuple(f["rows"][b][c] for c in COLUMNS) for b in TABLE_3} == TABLE_3
    assert f["quartiles"] == [5.0, 56.5, 499.0]  # Table 3's bin edges
    assert f["published_agreement"] == [4800, 4800]  # the rule recomputes every published freq_cat
    assert (f["n_rows"], f["unmatched_rows"], f["items_without_rows"]) == (4800, 0, 0)
    assert sum(sum(row.values()) for row in f["items"].values()) == 1200
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # Fig. 2 of the paper, drawn from these counts


def test_a_repeated_row_in_a_frequency_file_is_refused(tmp_path: Path):
    items = tmp_path / "items.csv"
    items.write_text("id,first,second,label\na,One.,Two.,x\n", encoding="utf-8")
    freq = tmp_path / "freq.csv"
    freq.write_text("first,second,variant,frequency\nOne.,Two.,so,3\nOne.,Two.,so,4\n", encoding="utf-8")
    r = runner.invoke(app, ["data", "audit", str(items), "--by", "label", "--frequencies", str(freq)])
    assert r.exit_code != 0 and "row 3" in str(r.exception) and "row 2" in str(r.exception)
