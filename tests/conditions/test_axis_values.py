"""Axis values typed by their axis: numbers in a study or config file are numbers, two temperatures never
share a condition name, only a decimal is a temperature, the seed a run records is the one its server is
sent, and a ``--config`` file may hold any subset of a run's fields (real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lingdiag.cli.run import build_config
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate, run
from lingdiag.errors import ConfigError
from lingdiag.models.mock import MockBackend
from lingdiag.records import GenerationRequest
from lingdiag.rundir import RunStore
from lingdiag.study.schema import load_study


def _sampled(r: GenerationRequest) -> str:
    return "True" if r.sampling is None else "False"


def test_a_study_names_temperatures_as_numbers(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("models: [{spec: mock}]\n"
                                     "suites: [{suite: imperfective, axes: {temperature: [0, 0.7, 1.5]}}]\n")
    entry = load_study(tmp_path / "s.yaml").suites[0]
    assert entry.axes == {"temperature": ["0", "0.7", "1.5"]}
    # The same selection as the command line's --temperature 0,0.7,0.001.
    numbers: dict[str, list[Any]] = {"temperature": [0, 0.7, 1e-3]}  # as YAML or Python hand them over
    assert RunConfig(suite="imperfective", model="mock", axes=numbers).axes == \
        RunConfig(suite="imperfective", model="mock", axes={"temperature": ["0", "0.7", "0.001"]}).axes


def test_a_yaml_boolean_is_refused_as_an_axis_value(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("models: [{spec: mock}]\n"
                                     "suites: [{suite: imperfective, axes: {thinking: [off, on]}}]\n")
    with pytest.raises(ConfigError, match=r"s.yaml.*axis thinking: false is a YAML boolean.*quote") as e:
        load_study(tmp_path / "s.yaml")
    assert "\n" not in str(e.value)


def test_two_temperatures_never_share_a_condition_name(tmp_path: Path) -> None:
    config = RunConfig(suite="imperfective", model="mock", limit=2, seed=3,
                       axes={"strategy": ["zero-shot"], "temperature": ["0.1234561", "0.1234562", "0.70", "0.7"]})
    evaluate(config, MockBackend(_sampled), tmp_path / "r")
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["temperature"] == {"zero-shot/temperature-0.1234561": {"temperature": 0.1234561, "seed": 3},
                                   "zero-shot/temperature-0.1234562": {"temperature": 0.1234562, "seed": 3},
                                   "zero-shot/temperature-0.7": {"temperature": 0.7, "seed": 3}}
    counts: dict[str, int] = {}
    for r in RunStore(tmp_path / "r").load_records():
        counts[r.condition] = counts.get(r.condition, 0) + 1
    assert set(counts.values()) == {2}  # n per condition, not doubled by a shared name


@pytest.mark.parametrize("value", ["0_5", "inf", "١", "0x1", " 0.5", "5e", "+-1"])
def test_only_a_decimal_number_is_a_temperature(value: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected a number from 0 to 5"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes={"temperature": [value]}, limit=2),
                 MockBackend(_sampled), tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_the_server_is_sent_the_seed_the_run_records(fake_api: Any, tmp_path: Path) -> None:
    bodies: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> str:
        bodies.append(body)
        return "True"

    fake_api.content = answer
    model = f"openai:m@{fake_api.url}"
    for temperatures, out in ((["0"], "greedy"), (["0.7"], "sampled")):
        bodies.clear()
        config = RunConfig(suite="imperfective", model=model, limit=2, seed=7,
                           axes={"strategy": ["zero-shot"], "temperature": temperatures})
        run(config, tmp_path / out, cache=False)
        assert bodies and {b["seed"] for b in bodies} == {7}, out
        assert RunStore(tmp_path / out).read_meta().config["seed"] == 7
    # Another seed named for the server is the server's; the run's seed stays the run's.
    bodies.clear()
    run(RunConfig(suite="imperfective", model=model, limit=2, seed=7, axes={"strategy": ["zero-shot"]},
                  model_options={"seed": 11}), tmp_path / "named", cache=False)
    assert {b["seed"] for b in bodies} == {11}


def _flags(suite: str, **given: Any) -> dict[str, Any]:
    return {"suite": suite, **given}


def test_a_config_file_may_hold_any_subset_of_the_flags(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("chunk_items: 400\n")
    config = build_config(_flags("imperfective", model="mock", config_file=tmp_path / "c.yaml"), ["--strategy", "cot"])
    assert (config.suite, config.model, config.chunk_items, config.axes) == ("imperfective", "mock", 400,
                                                                              {"strategy": ["cot"]})
    (tmp_path / "m.yaml").write_text("model: mock\nseed: 7\naxes: {temperature: [0, 0.7]}\n")
    config = build_config(_flags("imperfective", config_file=tmp_path / "m.yaml"), [])
    assert (config.model, config.seed, config.axes) == ("mock", 7, {"temperature": ["0", "0.7"]})
    config = build_config(_flags("imperfective", config_file=tmp_path / "m.yaml", seed=3), [])
    assert config.seed == 3  # a flag overrides the file


@pytest.mark.parametrize(("text", "words"), [
    ("chunk_items: 0\n", "c.yaml: chunk_items: Input should be greater than or equal to 1"),
    ("chunk_itemz: 4\n", "c.yaml: chunk_itemz"),
    ("- 1\n", "c.yaml: a run config file is a mapping"),
])
def test_a_bad_partial_config_file_is_one_line_naming_it(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ConfigError) as e:
        build_config(_flags("imperfective", model="mock", config_file=tmp_path / "c.yaml"), [])
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
