"""The layout's promises: no import cycles, a library that loads without the CLI's
dependencies, and options that reach their consumer validated, by one path each."""

from __future__ import annotations

import ast
import fnmatch
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grimp
import pytest

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError
from lingdiag.models.providers import load_backend
from lingdiag.suite import SUITES

LINGDIAG = [sys.executable, "-m", "lingdiag"]


def _cycle(graph: grimp.ImportGraph) -> list[str] | None:
    """One import cycle among modules (function-level imports included), if any."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.find_modules_directly_imported_by(m)):
            if state.get(n) == 1:
                return [*stack[stack.index(n):], n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph.modules):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycle_among_modules() -> None:
    graph = grimp.build_graph("lingdiag")
    assert _cycle(graph) is None
    # Nothing in the library imports the CLI (``python -m lingdiag`` is the CLI's other door).
    assert not [m for m in graph.find_modules_that_directly_import("lingdiag.cli")
                if not m.startswith("lingdiag.cli") and m != "lingdiag.__main__"]


def test_library_and_every_suite_load_without_typer_and_rich() -> None:
    code = """
import sys
sys.modules["typer"] = None  # import typer now raises ImportError, as if not installed
sys.modules["rich"] = None
import lingdiag
from lingdiag.suite import SUITES
for name in ("imperfective", "explica", "cxnli"):
    suite = SUITES.get(name)
    assert suite.load("builtin").items, name
    assert suite.table([]) is not None
assert not [m for m in sys.modules if m.startswith("lingdiag.cli")]
print("ok", len(SUITES.names()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


@pytest.mark.parametrize(("options", "message"), [
    ({"batchtokens": 5}, "the embedded backend: batchtokens: unknown key; valid options: adapter, batch_tokens, "
                         "calibrate, continuous_batching, device, dtype, kv_cache, max_batch"),
    ({"threads": "two"}, "the embedded backend: threads: Input should be a valid integer"),
    ({"batch_tokens": -1}, r"backend: batch_tokens: Input should be greater than or equal to 1 \(got -1\)"),
])
def test_backend_options_are_validated_before_loading(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_backend("smollm2-135m", options)


def test_openai_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="openai backend: batch_tokens: unknown key; valid options: api_key_env"):
        load_backend("openai:m@http://127.0.0.1:9/v1", {"batch_tokens": 10})


def test_trust_remote_code_and_batch_tokens_reach_the_backend() -> None:
    from lingdiag.models.door import load_model

    backend = load_model(RunConfig(suite="imperfective", model="smollm2-135m", batch_tokens=1000,
                                   trust_remote_code=True))
    placement = backend.placement  # type: ignore[attr-defined]
    assert placement.batch_tokens == 1000
    assert backend.loaded.load_kwargs["trust_remote_code"] is True  # type: ignore[attr-defined]


@pytest.mark.parametrize(("args", "message"), [
    (["-o", "seed=3"], "suite 'imperfective': seed: unknown key; valid options: loglik_normalisation, max_new"),
    (["-o", "max_new_tokens=abc"], "suite 'imperfective': max_new_tokens: Input should be a valid integer"),
    (["--model-option", "concurency=4"], "the embedded backend: concurency: unknown key"),
    (["--batch-tokens", "0"], "error: batch_tokens: Input should be greater than or equal to 1 (got 0)"),
    (["--strategy", ","], "--strategy names no value; valid: zero-shot, dap, cot, counterfactual"),
    (["--out", "FILE"], "a file, not a run directory"),
])
def test_cli_option_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "FILE").write_text("not a run")
    args = [str(tmp_path / a) if a == "FILE" else a for a in args]
    out = subprocess.run([*LINGDIAG, "run", "imperfective", "--model", "smollm2-135m", "--limit", "1",
                          "--out", str(tmp_path / "r"), *args], capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_execution_settings_are_recorded_in_meta(tmp_path: Path) -> None:
    from lingdiag.engine.run import evaluate
    from lingdiag.models.mock import MockBackend

    config = RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot"]}, limit=2, seed=7,
                       batch_tokens=512, trust_remote_code=False, model_options={"threads": 1})
    evaluate(config, MockBackend(lambda r: "True"), tmp_path / "r")
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["config"]["batch_tokens"] == 512 and meta["config"]["seed"] == 7 == meta["seed"]
    assert meta["config"]["model_options"] == {"threads": 1} and meta["config"]["trust_remote_code"] is False
    # A resumed run may change the batch budget (it only groups requests) but not the seed.
    evaluate(config.model_copy(update={"batch_tokens": 4096}), MockBackend(lambda r: "True"), tmp_path / "r")
    from lingdiag.errors import RunError

    with pytest.raises(RunError, match="differs in: seed"):
        evaluate(config.model_copy(update={"seed": 8}), MockBackend(lambda r: "True"), tmp_path / "r")


def test_every_suite_declares_an_option_model() -> None:
    for name in ("imperfective", "explica", "cxnli"):
        with pytest.raises(ConfigError, match=f"suite '{name}': nope: unknown key"):
            SUITES.get(name).parse_options({"nope": 1})


def test_report_html_to_a_directory_is_one_line(tmp_path: Path) -> None:
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import evaluate
    from lingdiag.models.mock import MockBackend

    evaluate(RunConfig(suite="imperfective", model="mock", limit=4), MockBackend(generate_fn=lambda r: "True"),
             tmp_path / "run")
    out = subprocess.run([*LINGDIAG, "report", str(tmp_path / "run"), "--html", str(tmp_path)], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 2 and "a directory; give a file name" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


SRC = Path(__file__).resolve().parents[1] / "src" / "lingdiag"
PYPROJECT = SRC.parents[1] / "pyproject.toml"


def _contract(name: str) -> dict[str, Any]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def test_every_suite_package_is_held_to_independence() -> None:
    # A suite missing from the contract's list would be silently exempt from it.
    patterns = _contract("A suite never imports another suite")["modules"]
    suites = [f"lingdiag.suites.{p.name}" for p in (SRC / "suites").iterdir()
              if (p / "__init__.py").is_file() or p.suffix == ".py" and p.stem != "__init__"]
    assert len(suites) >= 5
    assert [s for s in suites if not any(fnmatch.fnmatchcase(s, pat) for pat in patterns)] == []


def test_the_orchestrator_and_the_expanders_keep_their_place() -> None:
    assert "lingdiag.analysis" in _contract("The orchestrator imports no analysis")["forbidden_modules"]
    assert "lingdiag.engine" in _contract("No suite imports the orchestrator")["forbidden_modules"]
    graph = grimp.build_graph("lingdiag", exclude_type_checking_imports=True)
    assert not graph.chain_exists("lingdiag.engine", "lingdiag.analysis", as_packages=True)
    for source in ("lingdiag.conditions", "lingdiag.suites", "lingdiag.suitefile"):
        assert not graph.chain_exists(source, "lingdiag.engine", as_packages=True), source


MAX_LINES = 60
"""A function's length, its signature included (from ``def`` to its last line)."""


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in sorted(SRC.rglob("*.py")):
        for name, node in _functions(ast.parse(path.read_text(), str(path))):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_LINES:
                long[f"{path.relative_to(SRC)}:{name}"] = lines
    assert long == {}, long


RECORD_READERS = {
    "rundir": "the run directory's own code (RunStore, read_run, its state and summary)",
    "reading": "the one door to read runs for numbers (summaries, load_run, records_of)",
    "engine": "the writers of a run: resume, finish and an import's end",
    "cluster/merge.py": "shards merged into one run (a writer)",
    "conditions/after_thinking.py": "a finished run's thinking replayed as the input of a new run",
    "interop": "other harnesses' runs imported (writers) and re-read answer by answer",
}
"""Where ``items.jsonl`` (``RunStore.load_records``/``records``, ``read_run``) or ``summary.npz`` may be read;
everything else asks ``lingdiag.reading``, so that whether a run counts is decided once."""


def test_runs_are_read_for_numbers_through_one_door() -> None:
    root = Path(__file__).parents[1] / "src" / "lingdiag"
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if any(where == k or where.startswith(k + "/") for k in RECORD_READERS):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = (node.func.attr if isinstance(node.func, ast.Attribute) else
                    node.func.id if isinstance(node.func, ast.Name) else "") if isinstance(node, ast.Call) else ""
            if name in ("load_records", "read_run", "read_summary") or (
                    name == "records" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and "store" in ast.unparse(node.func.value).lower()):
                found.append(f"{where}:{getattr(node, 'lineno', 0)}: {name}")
    assert found == []
