"""Data as researchers hold it: a pandas DataFrame in the Python API, a parquet file, a local
``datasets`` directory named without ``hf:``, a ``;``-separated CSV (with the delimiter hint, and
the error that suggests it), and a missing local path failing at once, naming the path.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pydantic import ValidationError

from lingdiag import RunConfig, evaluate
from lingdiag.errors import DatasetError
from lingdiag.models.mock import MockBackend
from lingdiag.suitefile.check import check

ROWS = [{"id": k, "premise": f"Premise {k}.", "hypothesis": f"Hypothesis {k}.", "gold": "yes" if k % 2 else "no",
         "direction": "upward" if k < 3 else "downward"} for k in range(1, 5)]


def suite(tmp_path: Path, data: str, **items: object) -> Path:
    doc = {"name": "inputs", "items": {"data": data, "fields": ["premise", "hypothesis"], "gold": "gold",
                                       "tags": {"direction": "direction"}, **items},
           "conditions": {"format": {"values": {"plain": {
               "user": "{{ premise }} {{ hypothesis }}", "parser": "nli-label", "labels": ["yes", "no"]}}}},
           "metrics": {"acc": {"accuracy": {}}}}
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def ids(path: Path, dataset: str = "builtin") -> list[str]:
    return [it.id for it in check(path, dataset).suite.load(dataset).items]


@pytest.fixture()
def offline_hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_a_dataframe_runs_and_its_content_names_it(tmp_path: Path) -> None:
    frame = pd.DataFrame(ROWS)
    path = suite(tmp_path, "unused.csv")
    config = RunConfig(suite=str(path), model="mock", dataset=frame)
    assert config.dataset.startswith("rows:") and len(config.dataset) == len("rows:") + 64
    assert RunConfig(suite=str(path), model="mock", dataset=pd.DataFrame(ROWS)).dataset == config.dataset
    result = evaluate(config, MockBackend(lambda r: "yes"), tmp_path / "run")
    assert result.metrics["plain"]["acc"] == 0.5 and result.metrics["plain"]["n"] == 4
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["config"]["dataset"] == config.dataset
    records = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in records] == ["1", "2", "3", "4"]
    assert records[0]["fields"] == {"premise": "Premise 1.", "hypothesis": "Hypothesis 1."}


def test_anything_else_is_a_field_error_naming_what_was_given() -> None:
    with pytest.raises(ValidationError, match="a DataFrame .anything with to_dict.'records'..; got list"):
        RunConfig(suite="x.yaml", model="mock", dataset=ROWS)  # type: ignore[arg-type]


def test_parquet(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "items.parquet")
    assert ids(suite(tmp_path, "items.parquet")) == ["1", "2", "3", "4"]
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(DatasetError, match=r"broken\.parquet.*not a readable parquet file"):
        ids(suite(tmp_path, "broken.parquet"))


def test_a_local_datasets_directory_without_hf(tmp_path: Path, offline_hf: None) -> None:
    import datasets

    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    assert ids(suite(tmp_path, "saved")) == ["1", "2", "3", "4"]


def test_a_semicolon_csv_reads_with_the_hint_and_without_it_says_so(tmp_path: Path) -> None:
    header = list(ROWS[0])
    text = ";".join(header) + "\n" + "".join(";".join(str(r[c]) for c in header) + "\n" for r in ROWS)
    (tmp_path / "items.csv").write_text(text, encoding="utf-8")
    assert ids(suite(tmp_path, "items.csv", delimiter=";")) == ["1", "2", "3", "4"]
    with pytest.raises(DatasetError, match=r"items\.csv: one column 'id;premise;.*looks ';'-separated; set "
                                           r"items\.delimiter: ';'"):
        ids(suite(tmp_path, "items.csv"))
    # A comma in a cell split the row into more cells than the header's one: refused the same way.
    (tmp_path / "items.csv").write_text(text.replace(str(ROWS[0]["premise"]), "Anna, who was tired, ran"),
                                        encoding="utf-8")
    with pytest.raises(DatasetError, match=r"looks ';'-separated; set items\.delimiter: ';'"):
        ids(suite(tmp_path, "items.csv"))


@pytest.mark.parametrize("data", ["hf:./typo-dir", "typo-dir", "typo.csv", "typo.parquet"])
def test_a_missing_local_path_fails_at_once_naming_it(tmp_path: Path, data: str) -> None:
    path = suite(tmp_path, data)
    start = time.monotonic()
    with pytest.raises(DatasetError, match="typo") as e:
        check(path)
    assert time.monotonic() - start < 1.0
    assert str(tmp_path / data.removeprefix("hf:./")) in str(e.value) and "\n" not in str(e.value)
