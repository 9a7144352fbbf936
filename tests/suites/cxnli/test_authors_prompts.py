"""``-o prompt_source=authors``: our prompts equal, byte for byte, what the authors' code builds.

The expected text comes from the authors' own code in ../shared/reference/cxnli/:
``experimentSetup.py`` (``runTests_NLI._load_data``, ``_collate_data`` and
``_generate_prompt``, then ``.format(premise, hypothesis)`` as ``get_all`` does) with the
texts of ``CxNLI_prompts.py``. Its imports of the OpenAI client, tqdm and scikit-learn are
stubbed: only the prompt building runs.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lingdiag.errors import ConfigError
from lingdiag.io import fetch as fetch_mod
from lingdiag.records import Generation, GenerationRequest, ResultRow
from lingdiag.registry import load_plugins
from lingdiag.suites import cxnli as suite
from lingdiag.suites.cxnli import authors, files, tables

REFERENCE = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "cxnli"

# Our variant name → the authors' prompt_number (index in CxNLI_prompts.prompts), and the
# prompt_number of its chain-of-thought text.
PROMPT_NUMBER = {"variation-1": 0, "variation-2": 1, "variation-3": 2, "variation-4": 3, "variation-1-rephrase": 4,
                 "variation-2-rephrase-a": 6, "variation-2-rephrase-b": 7, "variation-3-long": 9,
                 "variation-3-rephrase-a": 10, "variation-3-rephrase-b": 11, "variation-3-rephrase-c": 13,
                 "variation-3-rephrase-d": 14}
COT_NUMBER = {"variation-1-rephrase": 5, "variation-2": 8, "variation-3": 12}
# The authors' README: (train file, train_data_version) per setting, for both experiments.
TRAIN = {"zero": ("", "zero"), "one-cxnli": ("CxNLI/CxNLI_1_example_train.csv", "CxNLI"),
         "three-cxnli": ("CxNLI/CxNLI_3_examples_train.csv", "CxNLI"),
         "one-snli": ("CxNLI/SNLI_1_example_train.csv", "SNLI"),
         "three-snli": ("CxNLI/SNLI_3_examples_train.csv", "SNLI")}
TEST = {"1": "CxNLI/CxNLI_3_examples_test.tsv", "2": "CxNLI_distinction/CxNLI_distinction_test.tsv"}


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    """The authors' ``runTests_NLI`` class, with its API imports stubbed."""
    if not (REFERENCE / "experimentSetup.py").is_file():
        pytest.skip(f"the authors' code is not available at {REFERENCE}")
    prompts_pkg = types.ModuleType("prompts")
    spec = importlib.util.spec_from_file_location("prompts.CxNLI_prompts", REFERENCE / "CxNLI_prompts.py")
    assert spec and spec.loader
    cx_prompts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cx_prompts)
    prompts_pkg.CxNLI_prompts = cx_prompts  # type: ignore[attr-defined]
    stubs = {"openai": types.ModuleType("openai"), "tqdm": types.ModuleType("tqdm"),
             "sklearn": types.ModuleType("sklearn"), "sklearn.metrics": types.ModuleType("sklearn.metrics"),
             "prompts": prompts_pkg, "prompts.CxNLI_prompts": cx_prompts}
    stubs["openai"].OpenAI = object  # type: ignore[attr-defined]
    stubs["tqdm"].tqdm = lambda x: x  # type: ignore[attr-defined]
    stubs["sklearn.metrics"].f1_score = None  # type: ignore[attr-defined]
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        spec = importlib.util.spec_from_file_location("cxnli_reference_setup", REFERENCE / "experimentSetup.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module.runTests_NLI
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def expected(reference: Any, root: Path, test: str, setting: str, prompt_number: int) -> list[str]:
    """The authors' prompt for every row of ``test`` (a file under ``root``)."""
    tester = reference.__new__(reference)  # __init__ reads an API key; only the data part is needed
    train, tester.train_data_version = TRAIN[setting]
    tester.test_data = tester._collate_data(tester._load_data(str(root / test)), True)
    tester.train_data = tester._collate_data(tester._load_data(str(root / train)), False) if train else {}
    return [tester._generate_prompt(prompt_number, row[0]).format(row[1], row[2]) for row in tester.test_data]


def ours(spec: str, exp: str, setting: str, variant: str, cot: bool) -> list[str]:
    ds = files.load(spec)
    axes = {"exp": [exp], "setting": [setting], "variant": [variant], "cot": ["on" if cot else "off"]}
    (c,) = suite.conditions(ds, axes, suite.Options(), 0)
    assert c.axes["prompt_source"] == "authors"
    out = []
    for item in c.items:
        (req,) = c.strategy.render(item)
        (msg,) = req.messages
        assert msg.role == "user"
        out.append(msg.content)
    return out


def assert_every_prompt_equal(got: list[str], want: list[str]) -> None:
    """Every prompt byte for byte; a failure names the first prompt that differs."""
    assert len(got) == len(want)
    bad = next((i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w), None)
    assert bad is None, f"prompt {bad} differs:\nours:    {got[bad]!r}\nauthors: {want[bad]!r}"


@pytest.mark.parametrize("exp", ["1", "2"])
@pytest.mark.parametrize("setting", list(TRAIN))
@pytest.mark.parametrize("variant,cot", [("variation-2", False), ("variation-3", False), ("variation-3", True),
                                         ("variation-2", True), ("variation-3-rephrase-c", False)])
def test_prompts_equal_the_authors_byte_for_byte(reference: Any, shared_datasets: Path, exp: str, setting: str,
                                                 variant: str, cot: bool) -> None:
    root = shared_datasets / "cxnli"
    want = expected(reference, root, TEST[exp], setting, (COT_NUMBER if cot else PROMPT_NUMBER)[variant])
    assert_every_prompt_equal(ours(str(root), exp, setting, variant, cot), want)


@pytest.mark.parametrize("variant", list(PROMPT_NUMBER) + [f"{v}/cot" for v in COT_NUMBER])
def test_every_authors_variant_is_their_text(reference: Any, shared_datasets: Path, variant: str) -> None:
    name, _, cot = variant.partition("/")
    root = shared_datasets / "cxnli"
    want = expected(reference, root, TEST["1"], "three-cxnli", (COT_NUMBER if cot else PROMPT_NUMBER)[name])
    assert_every_prompt_equal(ours(str(root), "1", "three-cxnli", name, bool(cot)), want)


def test_the_known_formatting_details(shared_datasets: Path) -> None:
    text = ours(str(shared_datasets / "cxnli"), "1", "three-cxnli", "variation-3", False)[0]
    assert "based on construction grammar." in text and "You are the world" not in text
    # A blank line after the instruction, global example numbers, trailing spaces.
    assert "Output a single number only and nothing else.\n\nExample Premise 1: " in text
    assert "Example Relation Output 9: 0 \n\nPremise: " in text and text.endswith("\nRelation: ")
    snli = ours(str(shared_datasets / "cxnli"), "2", "three-snli", "variation-1", False)[0]
    assert snli.startswith("You are the world's best annotator.")
    assert "\nExample Relation Output 9: 2\n\nPremise: " in snli  # bare codes in the SNLI files
    # Examples keep their number in the file: the last construction's are 64-72.
    last = ours(str(shared_datasets / "cxnli"), "1", "three-cxnli", "variation-2", False)[-1]
    assert "\nExample Premise 64: " in last and "Example Premise 72: " in last and "Example Premise 1: " not in last


def test_an_item_without_examples_of_its_key_gets_none() -> None:
    """The authors' ``KeyError`` path: the prompt is built as in the zero-shot setting."""
    ds = files.load("builtin")
    axes = {"exp": ["1"], "setting": ["zero", "three-cxnli"], "variant": ["variation-2"], "cot": ["off"]}
    zero, three = suite.conditions(ds, axes, suite.Options(), 0)
    item = three.items[0]
    assert isinstance(three.strategy, authors.AuthorsPrompt) and isinstance(zero.strategy, authors.AuthorsPrompt)
    assert "Example Premise" in three.strategy.text(item)
    unknown = dataclasses.replace(item, tags={**item.tags, "schema": "no-such-cxn"})
    assert three.strategy.text(unknown) == zero.strategy.text(unknown)
    assert three.strategy.parse(unknown, [Generation(text="1", n_tokens=1)]).detail["n_examples"] == 0


@pytest.mark.parametrize("spec,test", [("official-o1-104", "o1-preview/CxNLI_3_examples_test104.csv"),
                                       ("official-o1-16", "o1-preview/CxNLI_3_examples_test16.csv")])
def test_o1_subset_prompts_equal_the_authors(reference: Any, shared_datasets: Path, spec: str, test: str) -> None:
    load_plugins()
    fetch_mod.fetch("cxnli", str(shared_datasets))
    want = expected(reference, shared_datasets / "cxnli", test, "three-cxnli", PROMPT_NUMBER["variation-3"])
    assert ours(spec, "1", "three-cxnli", "variation-3", False) == want
    want = expected(reference, shared_datasets / "cxnli", "o1-preview/CxNLI_distinction_test10.csv", "zero", 2)
    assert ours(spec, "2", "zero", "variation-3", False) == want


def test_reasoning_models_get_a_large_cap_and_no_stop_sequences() -> None:
    ds = files.load("builtin")
    axes = {"exp": ["1"], "setting": ["zero"], "variant": ["variation-2"], "cot": ["off", "on"]}
    for source in ("authors", "paper"):
        options = suite.SUITE.parse_options({"reasoning": True, "prompt_source": source})
        assert isinstance(options, suite.Options)
        for c in suite.conditions(ds, axes, options, 0):
            (req,) = c.strategy.render(c.items[0])
            assert isinstance(req, GenerationRequest)
            assert req.max_new_tokens == 32768 and req.stop == ()
    (c, _) = suite.conditions(ds, axes, suite.Options(), 0)
    (req,) = c.strategy.render(c.items[0])
    assert isinstance(req, GenerationRequest)
    assert req.max_new_tokens == 16 and req.stop == ("\nExample Premise", "\nPremise:")


def test_variants_and_cot_are_checked_against_the_source(tmp_path: Path) -> None:
    ds = files.load("builtin")
    axes = {"exp": ["1"], "setting": ["zero"], "variant": ["rephrase-1"], "cot": ["off"]}
    with pytest.raises(ConfigError, match="not a prompt of -o prompt_source=authors"):
        suite.conditions(ds, axes, suite.Options(), 0)
    with pytest.raises(ConfigError, match="not a prompt of -o prompt_source=paper"):
        suite.conditions(ds, {**axes, "variant": ["variation-3-long"]}, suite.Options(prompt_source="paper"), 0)
    with pytest.raises(ConfigError, match="no chain-of-thought prompt for variation-4"):
        suite.conditions(ds, {**axes, "variant": ["variation-4"], "cot": ["on"]}, suite.Options(), 0)
    path = tmp_path / "v.yaml"
    path.write_text("terse: Say 0, 1 or 2.\n")
    (c,) = suite.conditions(ds, {**axes, "variant": ["user"]}, suite.Options(variants=str(path)), 0)
    assert c.strategy.render(c.items[0])[0].messages[0].content.startswith("Say 0, 1 or 2.\n\nPremise: ")


def test_every_authors_variant_is_on_the_axis() -> None:
    (axis,) = [a for a in suite.SUITE.axes if a.name == "variant"]
    assert set(authors.VARIANTS) <= set(axis.values) and "rephrase-1" in axis.values
    assert set(authors.COT_VARIANTS) <= set(authors.VARIANTS)


def _row(source: str | None, exp: str, variant: str = "variation-2") -> ResultRow:
    axes = {"exp": exp, "setting": "zero", "variant": variant, "cot": "off"}
    if source:
        axes["prompt_source"] = source
    labels = {lab: {"accuracy": 0.5, "f1": 0.5} for lab in ("entailment", "neutral", "contradiction")}
    metrics = {"accuracy": 0.5, "by_label": labels, "macro_f1": 0.5, "n": 2, "by_construction": {},
               "predicted": {"entailment": 1, "neutral": 1, "contradiction": 0, "unparsed": 0},
               "majority_baseline": 0.5, "unparsed_rate": 0.0}
    return ResultRow(model="m", condition=f"exp{exp}/zero/{variant}", axes=axes, metrics=metrics)


def test_table_header_names_the_prompt_source() -> None:
    out = tables.table([_row("authors", "1"), _row("authors", "2")])
    assert "prompts: authors;" in out.splitlines()[0]
    mixed = tables.table([_row("authors", "1"), _row("paper", "1"), _row(None, "2")])
    assert "prompts: authors, paper;" in mixed
    assert "| authors:variation-2 |" in mixed and "| paper:variation-2 |" in mixed
