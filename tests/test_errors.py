"""One wording for every pydantic validation error: ``SOURCE: FIELD: what is wrong``, whether the
input is a run config file, ``-o``/provider options, a run's recorded config or a suite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from lingdiag.config import RunConfig, validate_options
from lingdiag.errors import BOOLEAN_HINT, ConfigError, RunError, one_line, validation_lines
from lingdiag.rundir import RunStore
from lingdiag.suitefile import load_suite


class Opts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1
    name: str = ""


def error_of(data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as e:
        Opts.model_validate(data)
    return e.value


def test_a_field_error_names_source_field_problem_and_value() -> None:
    assert one_line(error_of({"size": "big"}), "opts.yaml") == (
        "opts.yaml: size: Input should be a valid integer, unable to parse string as an integer (got 'big')")
    assert one_line(error_of({"size": "big"})).startswith("size: Input should be a valid integer")
    assert one_line(error_of({"size": "big"}), "meta.json", root="config").startswith("meta.json: config.size: ")


def test_an_unknown_key_is_named_without_its_value_and_every_problem_is_one_line() -> None:
    e = error_of({"sise": 2, "name": 3})
    assert validation_lines(e, "f.yaml") == ["f.yaml: name: Input should be a valid string (got 3)",
                                             "f.yaml: sise: unknown key"]


def test_long_values_are_cut_and_a_boolean_for_text_gets_the_yaml_hint() -> None:
    assert one_line(error_of({"size": "x" * 100})).endswith("(got '" + "x" * 56 + "...)")
    assert one_line(error_of({"name": True})) == f"name: Input should be a valid string (got True); {BOOLEAN_HINT}"


def test_an_error_about_the_whole_input_quotes_none_of_it() -> None:
    """A model-level check's input is everything given, a model URL's credentials included."""
    with pytest.raises(ValidationError) as e:
        RunConfig.model_validate({"suite": "imperfective", "model": "openai:m@http://u:SECRET@h/v1",
                                  "shard": "1/2", "shard_base_urls": ["http://a/v1"]})
    line = one_line(e.value, "run.yaml")
    assert line.startswith("run.yaml: ") and "SECRET" not in line and "got" not in line


def test_every_input_speaks_the_same_shape(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("suite: imperfective\nmodel: mock\nlimit: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as config_file:
        RunConfig.from_yaml(tmp_path / "run.yaml")
    assert str(config_file.value) == (f"{tmp_path / 'run.yaml'}: limit: Input should be greater than or equal to 1 "
                                      "(got 0)")

    with pytest.raises(ConfigError) as options:
        validate_options(Opts, {"size": "big"}, "suite 'toy'")
    assert str(options.value).startswith("suite 'toy': size: Input should be a valid integer")
    assert str(options.value).endswith("(got 'big'); valid options: name, size")

    meta = {"schema_version": 1, "config": {"suite": "imperfective", "model": "mock", "limit": "many"},
            "model": {"name": "mock"}, "dataset": {}, "versions": {}, "seed": 0, "timings": {}, "skipped": {}}
    (tmp_path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(RunError) as recorded:
        _ = RunStore(tmp_path).read_meta().run_config
    assert str(recorded.value).startswith(f"{tmp_path / 'meta.json'}: config.limit: Input should be a valid "
                                          "integer")

    (tmp_path / "s.yaml").write_text("name: s\nitems: {data: d.csv}\nconditions: 3\nmetrics: {}\n",
                                     encoding="utf-8")
    with pytest.raises(ConfigError) as suite_file:
        load_suite(tmp_path / "s.yaml")
    assert str(suite_file.value).splitlines() == [f"{tmp_path / 's.yaml'}: items.fields: Field required",
                                                  f"{tmp_path / 's.yaml'}: conditions: Input should be a valid "
                                                  "dictionary (got 3)"]
