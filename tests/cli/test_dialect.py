"""One CLI dialect: commands grouped by task in ``--help``, ``-m`` wherever a model is taken,
``--json`` explained everywhere, lists comma-separated, ``--limit`` spreading items everywhere,
and the documented spellings kept (``lingdiag fetch``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import typer
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.cli.adapt import _layers
from lingdiag.cli.options import DATA, RESULTS, RUN, SETUP, SUITE_TOOLS, TREAT, comma_list
from lingdiag.errors import ConfigError

if TYPE_CHECKING:  # torch loads only in the slow test that reads the vectors
    from torch import Tensor


def _commands() -> Iterator[tuple[str, Any]]:
    """Every command as ``(its name after lingdiag, the command)`` (typer's own click)."""
    mount_suites()

    def walk(prefix: str, cmd: Any) -> Iterator[tuple[str, Any]]:
        yield prefix, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(f"{prefix} {name}".strip(), sub)

    return walk("", typer.main.get_command(app))


def _options(cmd: Any) -> list[Any]:
    return [p for p in cmd.params if p.param_type_name == "option"]


def test_help_groups_the_commands_by_task() -> None:
    mount_suites()
    shown = CliRunner().invoke(app, ["--help"], terminal_width=100).output
    for panel in (RUN, RESULTS, DATA, TREAT, SUITE_TOOLS, SETUP):
        assert f"─ {panel} ─" in shown, panel
    assert "─ Commands ─" not in shown  # every command is in a group
    run_panel = shown[shown.index(f"─ {RUN} ─"):]
    assert run_panel.index(" run ") < run_panel.index("╰")
    assert " fetch " not in shown  # under `data`, its old spelling hidden


def test_every_model_option_takes_dash_m_and_every_json_option_says_what_it_prints() -> None:
    models, jsons = [], []
    for name, cmd in _commands():
        for p in _options(cmd):
            if "--model" in p.opts:
                models.append(name)
                assert "-m" in p.opts, f"lingdiag {name}: --model without -m"
            if "--json" in p.opts:
                jsons.append(name)
                assert p.help, f"lingdiag {name}: --json without help"
    assert {"run", "adapt steer", "adapt lora", "cache clear", "explica select-prompt",
            "imperfective similarity"} <= set(models)
    assert len(jsons) > 10


def test_dash_m_reaches_the_model_option() -> None:
    for args in (["adapt", "steer", "imperfective", "-m", "nosuch:model", "--layers", "1", "--out", "v.st",
                  "--pairs", "missing.jsonl"],
                 ["run", "imperfective", "-m", "nosuch:model", "--limit", "1"]):
        result = CliRunner().invoke(app, args)
        assert "No such option" not in result.output and result.exit_code != 0


def test_lists_are_comma_separated_and_repeats_still_add() -> None:
    assert comma_list(["10,20", "30", " ", "40 , 50"]) == ["10", "20", "30", "40", "50"]
    assert _layers(["10,20", "30"]) == [10, 20, 30]
    with pytest.raises(ConfigError, match="--layers 10,x: expected layer numbers"):
        _layers(["10,x"])


def test_documented_fetch_spelling_still_works(tmp_path: Path) -> None:
    runner = CliRunner()
    new = runner.invoke(app, ["data", "fetch", "no-such-suite"])
    old = runner.invoke(app, ["fetch", "no-such-suite"])
    assert new.exit_code == old.exit_code != 0 and "No such command" not in old.output
    assert type(new.exception) is type(old.exception)


def test_the_duplicate_explica_competence_is_gone() -> None:
    names = {name for name, _ in _commands()}
    assert "competence" in names and "explica competence" not in names


@pytest.mark.slow
def test_adapt_steer_limit_spreads_the_pairs(tmp_path: Path) -> None:
    """``--limit 2`` of six pairs steers with pairs 1 and 4 (spread), not 1 and 2 (the first)."""
    from safetensors.torch import load_file

    pairs = [{"prompt": f"Is {k} a number?", "positive": "Yes" if k % 2 else "True",
              "negative": "No" if k % 3 else "False"} for k in range(6)]

    def write(name: str, rows: list[dict[str, str]]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path

    def steer(source: Path, out: str, *limit: str) -> dict[str, Tensor]:
        args = ["adapt", "steer", "imperfective", "-m", "smollm2-135m", "--layers", "2,4", "--pairs",
                str(source), "--out", str(tmp_path / out), *limit]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return load_file(str(tmp_path / out))

    limited = steer(write("all.jsonl", pairs), "limited.safetensors", "--limit", "2")
    spread = steer(write("spread.jsonl", [pairs[0], pairs[3]]), "spread.safetensors")
    first = steer(write("first.jsonl", pairs[:2]), "first.safetensors")
    assert sorted(limited) == ["layer.2", "layer.4"]
    assert all((limited[k] == spread[k]).all() for k in limited)
    assert not all((limited[k] == first[k]).all() for k in limited)


def test_an_omitted_dataset_means_the_suites_default_on_every_command() -> None:
    """Every ``--dataset`` defaults to None (the suite's ``default_dataset``), not to a spelled-out
    ``builtin`` or ``official``; only the reproduction reads the data its published outputs are of."""
    found = {name: p for name, cmd in _commands() for p in _options(cmd) if "--dataset" in p.opts}
    assert {"run", "data stats", "data audit", "human export", "suite check", "suite score", "score explica",
            "score imperfective", "explica select-prompt", "imperfective similarity"} <= set(found)
    assert {name: p.default for name, p in found.items() if p.default is not None} == {"reproduce explica": "official"}
    for name, p in found.items():
        assert "official" in p.help if name == "reproduce explica" else "default dataset" in p.help, name


@pytest.mark.parametrize(("suite", "expected"), [("minimal-pairs", "blimp"), ("syntaxgym", "syntaxgym"),
                                                 ("imperfective", "builtin")])
def test_run_without_dataset_takes_the_suites_default(tmp_path: Path, suite: str, expected: str) -> None:
    from lingdiag.cli.run import build_config

    assert build_config({"suite": suite, "model": "mock"}, []).dataset == expected
    (tmp_path / "run.yaml").write_text(f"suite: {suite}\nmodel: mock\nlimit: 3\n", encoding="utf-8")
    from_file = build_config({"suite": suite, "config_file": tmp_path / "run.yaml"}, [])
    assert (from_file.dataset, from_file.limit) == (expected, 3)
    assert build_config({"suite": suite, "model": "mock", "dataset": "x.jsonl"}, []).dataset == "x.jsonl"


def test_score_explica_without_dataset_scores_the_builtin_items(tmp_path: Path) -> None:
    from lingdiag.suites.explica import data

    rows = [f"{it.fields['sentence_a']},{it.fields['sentence_b']},{c},{it.fields['human'][c]}"
            for it in data.builtin_items() for c in data.CONNECTIVES]
    path = tmp_path / "human.csv"
    path.write_text("Sentence_A,Sentence_B,connective,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    mount_suites()
    result = CliRunner().invoke(app, ["score", "explica", "--scores", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["matched_items"] == len(data.builtin_items()) == 72
