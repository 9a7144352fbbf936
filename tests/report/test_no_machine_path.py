"""No path of this machine in a shareable output: the study report's Markdown, LaTeX and HTML and
``lingdiag report``'s, over a stale run (its data file named by its absolute path) and a model that failed
to load from a cache directory (the load error names it), scanned for every absolute path they could leak."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import stand_in, study_backend

from lingdiag.io.paths import portable
from lingdiag.reading import load_runs
from lingdiag.report.export import write_tables
from lingdiag.report.html import write_html
from lingdiag.report.tables import tables
from lingdiag.study.execute import run_study
from lingdiag.study.report import write_report
from lingdiag.study.schema import StudyFile

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "suites" / "imperfective-nli-sample.json"


def _machine_paths(tmp: Path) -> list[str]:
    return [str(tmp), str(tmp.resolve()), str(Path.home()) + "/", os.getcwd() + "/"]


def test_reports_name_no_path_of_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data" / "nli.json"
    data.parent.mkdir()
    shutil.copy(SAMPLE, data)
    hub = tmp_path / "hub" / "models--org--m"

    def load(config: Any) -> Any:
        if config.model == "cached":
            raise RuntimeError(f"hf:org/m@step2 is not in the offline cache {hub} (HF_HUB_OFFLINE=1)")
        return study_backend(config)

    study = StudyFile.model_validate({
        "name": "paths", "base": tmp_path, "retries": 0, "models": [{"spec": "a"}, {"spec": "cached"}],
        "suites": [{"suite": "imperfective", "dataset": str(data), "axes": {"strategy": "zero-shot"}, "name": "nli"}]})
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    run_study(study, tmp_path / "out", models=stand_in(load))
    items = json.loads(data.read_text())
    data.write_text(json.dumps(items[:-1]))  # one item fewer: the run is stale, its reason names the file

    written = write_report(tmp_path / "out", tmp_path / "share" / "study.html", tmp_path / "share")
    run = tmp_path / "out" / "runs" / "a" / "nli"
    loaded = load_runs([run])
    write_html(tmp_path / "share" / "run.html", tables(loaded), loaded, {})
    written += [tmp_path / "share" / "run.html", *write_tables(tmp_path / "share" / "run", loaded)]
    texts = {p.name: p.read_text() for p in written}
    assert "stale" in texts["study.md"] and "models--org--m" in texts["study.md"]  # said, by name
    assert "nli.json" in tables(loaded)
    for name, text in texts.items():
        for path in _machine_paths(tmp_path):
            assert path not in text, (name, path)


@pytest.mark.parametrize(("text", "want"), [
    ("data /srv/u/data.json changed", "data …/data.json changed"),
    ("1/2 of zero-shot/cot, TBR_C / acc, </td>, http://127.0.0.1:8/v1/chat", None),  # no path: unchanged
    ("see file:///home/u/r.html", "see file://…/r.html"),
    ("in C:\\Users\\me\\data.json", "in …/data.json"),
    ("/study/runs/a/nli/items.jsonl", "runs/a/nli/items.jsonl"),
])
def test_a_path_is_named_relative_to_its_directory_or_by_its_last_part(text: str, want: str | None) -> None:
    assert portable(text, [Path("/study")]) == (text if want is None else want)
