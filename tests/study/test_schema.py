"""The study file: what it accepts, and one-line errors naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingdiag.errors import ConfigError
from lingdiag.study.schema import load_study, parse_size

GOOD = """
name: s
models:
  - {spec: smollm2-135m, family: SmolLM2, size: 135M}
  - name: tiny
    checkpoints:
      - {path: ckpt/step1, step: 1}
      - {spec: "hf:org/m@step2", step: 2, tokens: 2e6}
suites:
  - {suite: imperfective, dataset: data.json, axes: {strategy: zero-shot}, limit: 5}
  - {suite: minimal-pairs, dataset: "pairs/{language}.jsonl", languages: [en, fr]}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return path


def test_a_good_file_reads_with_sizes_axes_and_relative_paths(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, GOOD))
    assert study.models[0].parameters == 135e6
    assert study.suites[0].axes == {"strategy": ["zero-shot"]}
    assert study.resolve("data.json") == str(tmp_path / "data.json")
    assert study.resolve("imperfective") == "imperfective"
    assert study.retries == 2 and study.where.executor == "here"


@pytest.mark.parametrize(("value", "expected"), [("135M", 135e6), ("1.7B", 1.7e9), (360_000_000, 3.6e8), ("3e8", 3e8)])
def test_sizes(value: object, expected: float) -> None:
    assert parse_size(value) == expected


@pytest.mark.parametrize("value", ["1e400", "-1e400", "nan", "inf", "135000T", "1e16",
                                   pytest.param(10**400, id="400-digits"), -5, 0, "0M"])
def test_non_finite_or_absurd_sizes_are_refused_in_one_line(tmp_path: Path, value: object) -> None:
    """Issue 57: ``size: 1e400`` was read as infinity and printed ``infB``."""
    for key in ("size", "n_params"):
        path = _write(tmp_path, GOOD.replace("size: 135M", f"{key}: {value}"))
        with pytest.raises(ConfigError) as e:
            load_study(path)
        message = str(e.value)
        assert "\n" not in message and str(path) in message and f"models.0.{key}" in message, message


@pytest.mark.parametrize(("change", "field", "words"), [
    (("family: SmolLM2", "famly: SmolLM2"), "models.0.famly", "unknown key"),
    (("size: 135M", "size: big"), "models.0.size", "a size is a number"),
    (("{path: ckpt/step1, step: 1}", "{path: ckpt/step1}"), "models.1.checkpoints.0", "step or tokens"),
    (("{path: ckpt/step1, step: 1}", "{path: a, spec: b, step: 1}"), "models.1.checkpoints.0", "exactly one"),
    (("languages: [en, fr]", "languages: []"), "suites.1", "needs languages"),
    (("limit: 5", "limit: 0"), "suites.0.limit", "greater than or equal to 1"),
    (("name: s", "name: s\nretries: 99"), "retries", "less than or equal to 10"),
])
def test_errors_are_one_line_naming_file_and_field(tmp_path: Path, change: tuple[str, str], field: str,
                                                   words: str) -> None:
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(ConfigError) as e:
        load_study(path)
    message = str(e.value)
    assert "\n" not in message and str(path) in message and field in message and words in message


@pytest.mark.parametrize(("text", "key", "line", "first"), [
    (GOOD + "suites:\n  - {suite: imperfective}\n", "suites", 12, 9),
    (GOOD.replace("  - name: tiny\n", "  - name: tiny\n    name: small\n"), "name", 6, 5),
    (GOOD.replace("name: s\n", "name: s\nlimit: 3\nlimit: 4\n"), "limit", 4, 3),
])
def test_a_key_given_twice_is_refused_naming_it_and_its_line(tmp_path: Path, text: str, key: str, line: int,
                                                             first: int) -> None:
    """Issue 57: the later ``suites:`` or ``name:`` silently won (suite files already refused it)."""
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_study(path)
    assert str(e.value) == (f"{path}, line {line}: key {key!r} given twice in one mapping (first on line {first}); "
                            "a later one would silently replace the first")


def test_not_a_file_not_yaml_and_base_from_text(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_study(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="line 2, column 1: not valid YAML"):
        load_study(_write(tmp_path, "models: [\n"))
    with pytest.raises(ConfigError, match="field 'base'"):
        load_study(_write(tmp_path, GOOD + "base: /etc\n"))
    with pytest.raises(ConfigError, match="mapping"):
        load_study(_write(tmp_path, "- a\n"))


@pytest.mark.parametrize(("extra", "field", "words"), [
    ("run: {per_tokn: true}", "run.per_tokn", "unknown key"),
    ("run: {chunk_items: 0}", "run.chunk_items", "greater than or equal to 1"),
    ("run: {suite: x}", "run.suite", "unknown key"),  # what the study sets itself is not a run option
    ("compare: [[smollm2-135m, nobody]]", "compare", "'nobody' is not a model of the study"),
    ("compare: [[smollm2-135m]]", "compare.0", "a pair of model names"),
    ("compare: [{a: tiny@step1, b: tiny@step1}]", "compare.0", "on both sides"),
    # A comparison is a set of pairs: a pair twice, reversed, or inside a group, would count one test twice
    # in every Holm family it joins.
    ("compare: [[smollm2-135m, tiny@step1], [smollm2-135m, tiny@step1]]", "compare[1]",
     "[smollm2-135m, tiny@step1] is compared again in compare[0]"),
    ("compare: [[smollm2-135m, tiny@step1], [tiny@step1, smollm2-135m]]", "compare[1]",
     "reversed ([smollm2-135m, tiny@step1]) in compare[0]"),
    ("compare: [{a: [tiny@step1, tiny@step2], b: smollm2-135m}, [smollm2-135m, tiny@step2]]", "compare[1]",
     "compared reversed"),
    ("compare: [{a: [tiny@step1, tiny@step1], b: smollm2-135m}]", "compare.0", "'tiny@step1' is listed twice in a"),
])
def test_run_options_and_comparisons_are_checked(tmp_path: Path, extra: str, field: str, words: str) -> None:
    path = _write(tmp_path, GOOD + extra + "\n")
    with pytest.raises(ConfigError) as e:
        load_study(path)
    assert "\n" not in str(e.value) and field in str(e.value) and words in str(e.value), str(e.value)


@pytest.mark.parametrize(("models", "field", "words"), [
    ("models: [{spec: a, n_params: true}]", "models.0.n_params", "true is not"),
    ("models: [{name: m, checkpoints: [{spec: a, step: 10}, {spec: b, tokens: 5}]}]", "models.0",
     "checkpoints[1] gives tokens but no step, and checkpoints[0] a step"),
    ("models: [{name: m, checkpoints: [{spec: a, tokens: 5}, {spec: b, step: 1, tokens: 9}]}]", "models.0",
     "checkpoints[0] gives tokens but no step"),
    ("models: [{name: m, checkpoints: [{spec: a, step: 10}, {spec: b, step: 10}]}]", "models.0",
     "checkpoints[0] and checkpoints[1] are both at step 10"),
    ("models: [{name: m, checkpoints: [{spec: a, tokens: 2e6}, {spec: b, tokens: 2e6}]}]", "models.0",
     "both at tokens 2e+06"),
    ("models: [{name: m, checkpoints: [{spec: a, step: 1, tokens: 9}, {spec: b, step: 2, tokens: 5}]}]",
     "models.0", "step 2 gives fewer tokens (5) than step 1 (9)"),
])
def test_sizes_and_training_order_are_checked(tmp_path: Path, models: str, field: str, words: str) -> None:
    """A model's checkpoints are ordered by one axis (step, or tokens where none gives a step), each at its own
    place; a size is a number."""
    path = _write(tmp_path, models + "\nsuites: [{suite: imperfective}]\n")
    with pytest.raises(ConfigError) as e:
        load_study(path)
    assert "\n" not in str(e.value) and field in str(e.value) and words in str(e.value), str(e.value)


def test_checkpoints_by_tokens_are_named_apart(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, "models: [{name: m, checkpoints: [{spec: b, tokens: 1234567}, "
                                        "{spec: a, tokens: 1234568}, {spec: c, tokens: 2e9}]}]\n"
                                        "suites: [{suite: imperfective}]\n"))
    assert study.models[0].labels == ["m@1234567tok", "m@1234568tok", "m@2e+09tok"]


def test_checkpoints_by_tokens_alone_are_one_axis(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, "models: [{name: m, checkpoints: [{spec: b, tokens: 9e9}, "
                                        "{spec: a, tokens: 5}]}]\nsuites: [{suite: imperfective}]\n"))
    assert study.models[0].training_axis == "tokens"


def test_comparisons_by_study_names_pairs_and_groups(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, GOOD + "compare:\n  - [smollm2-135m, tiny@step1]\n"
                                              "  - {a: [tiny@step1], b: [tiny@step2], name: early vs late}\n"))
    assert [(c.a, c.b, c.title) for c in study.compare] == [
        (["smollm2-135m"], ["tiny@step1"], "smollm2-135m vs tiny@step1"),
        (["tiny@step1"], ["tiny@step2"], "early vs late")]
