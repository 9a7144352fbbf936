"""Bounded work from a small suite file (issue 35): a condition cap, template output and time
limits, YAML depth and duplicate keys, shot sampling linear in items. Each refusal is one line
that names the bound and how to raise it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
import yaml

from lingdiag.errors import ConfigError
from lingdiag.records import Item
from lingdiag.suitefile.check import check
from lingdiag.suitefile.prompt import ShotDraw
from lingdiag.suitefile.templates import TemplateProblem, compile_template

GOOD = {
    "name": "mini",
    "items": {"data": "items.csv", "fields": ["premise", "hypothesis"], "gold": "label"},
    "defaults": {"labels": ["yes", "no"], "parser": "nli-label", "user": "{{ premise }} / {{ hypothesis }}"},
    "conditions": {"strategy": {"values": {"plain": {}, "polite": {"system": "Be careful."}}}},
    "metrics": {"acc": {"accuracy": {}}},
}


def write(tmp_path: Path, doc: object) -> Path:
    (tmp_path / "items.csv").write_text("id,premise,hypothesis,label\n1,A man ran.,He ran.,yes\n2,X.,Y.,no\n")
    path = tmp_path / "suite.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_conditions_past_the_cap_are_refused_with_the_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    axes: dict[str, object] = {f"a{k}": {"values": {"x": {}, "y": {}}} for k in range(40)}
    path = write(tmp_path, {**GOOD, "conditions": axes})
    start = time.monotonic()
    with pytest.raises(ConfigError) as e:
        check(path)
    assert time.monotonic() - start < 10
    assert str(e.value) == (f"{path}: conditions: the axes expand to 1,099,511,627,776 conditions; the limit is "
                            "1000 conditions; raise it with LINGDIAG_MAX_CONDITIONS=N if you mean it")
    small: dict[str, object] = {f"a{k}": {"values": {"x": {}, "y": {}}} for k in range(3)}
    monkeypatch.setenv("LINGDIAG_MAX_CONDITIONS", "4")
    with pytest.raises(ConfigError, match="expand to 8 conditions; the limit is 4"):
        check(write(tmp_path, {**GOOD, "conditions": small}))
    monkeypatch.setenv("LINGDIAG_MAX_CONDITIONS", "8")
    assert len(check(write(tmp_path, {**GOOD, "conditions": small})).conditions) == 8


def test_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    text = yaml.safe_dump(GOOD, sort_keys=False).replace("metrics:\n", "metrics:\n  acc:\n    rate: {label: yes}\n")
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=r"line \d+: key 'acc' given twice in one mapping \(first on line \d+\)"):
        check(path)


def test_deep_yaml_is_one_line_not_recursion(tmp_path: Path) -> None:
    path = write(tmp_path, "name: " + "[" * 500 + "]" * 500 + "\n")
    with pytest.raises(ConfigError, match="line 1, column 56: nested more than 50 levels deep; refused"):
        check(path)


@pytest.mark.parametrize(("source", "message"), [
    ("{{ 2**(10**10) }}", r"2 \*\* 10000000000 in a template is too large a number"),
    ("{{ 'x' * 10**9 }}", "builds a text or list of 1,000,000,000 items"),
    ("{% for i in range(99999) %}{% for j in range(99999) %}{{ premise }}{% endfor %}{% endfor %}",
     "template output passes|takes too long"),
    ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}", "takes too long"),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError|takes too long"),
    ("{{ premise / 0 }}", "template error: TypeError"),
    ("{{ (premise|length) / 0 }}", "template error: ZeroDivisionError"),
])
def test_templates_are_bounded_in_time_and_size(source: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_TEMPLATE_SECONDS", "1")
    start = time.monotonic()
    with pytest.raises(TemplateProblem, match=message):
        compile_template(source, ["premise"]).render({"premise": "A man ran."})
    assert time.monotonic() - start < 8


def test_shot_sampling_is_linear_and_draws_as_before() -> None:
    pool = tuple(Item(id=f"i{k}", fields={}, gold="yes") for k in range(30_000))
    draw = ShotDraw(2, pool, 7, compile_template("{{ gold }}", ["gold"]))
    for item in (pool[0], pool[1], pool[12_345], pool[-1], Item(id="other", fields={}, gold="no")):
        candidates = [p for p in pool if p.id != item.id]  # what the draw was before: the same examples
        assert draw.examples(item) == random.Random(f"7/{item.id}").sample(candidates, 2)
    start = time.monotonic()
    for item in pool:
        draw.examples(item)
    assert time.monotonic() - start < 10  # a copy of the pool per item: about 30,000 x 30,000 steps


def test_an_empty_dataset_is_an_error_not_ok(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = write(tmp_path, GOOD)
    (tmp_path / "items.csv").write_text("id,premise,hypothesis,label\n")
    for args in (["suite", "check", str(path)], ["run", str(path), "--model", "mock", "--out", str(tmp_path / "r")]):
        proc = subprocess.run([sys.executable, "-m", "lingdiag", *args], capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path("src").resolve())})
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"{tmp_path / 'items.csv'}: no items: the dataset is empty" in proc.stderr
        assert "Traceback" not in proc.stderr and "ok" not in proc.stdout
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("spec", ["cache:../../outside.csv", "cache:/etc/hostname.csv"])
def test_cache_paths_cannot_leave_the_datasets_cache(tmp_path: Path, spec: str) -> None:
    from lingdiag.errors import DatasetError

    path = write(tmp_path, {**GOOD, "items": {**GOOD["items"], "data": spec}})  # type: ignore[dict-item]
    with pytest.raises(DatasetError, match="leads outside the datasets cache"):
        check(path)


def test_a_tampered_fetched_paradigm_is_an_error_not_left_out(tmp_path: Path, shared_datasets: Path) -> None:
    import shutil

    from lingdiag.errors import DatasetError
    from lingdiag.io.fetch import datasets_dir
    from lingdiag.suites.minimal_pairs.files import load

    folder = datasets_dir() / "blimp"
    folder.mkdir(parents=True)
    for name in ("wh_island.jsonl", "npi_present_1.jsonl"):
        shutil.copy(shared_datasets / "blimp" / name, folder / name)
    assert len(load("blimp").items) == 2000
    with (folder / "npi_present_1.jsonl").open("a") as f:
        f.write("\n")
    with pytest.raises(DatasetError, match="npi_present_1.jsonl: SHA-256 mismatch.*lingdiag data fetch blimp --only "
                                           "npi_present_1"):
        load("blimp")
