"""The scaling figure for a built-in suite: its headline metric against the recorded parameter
counts, one line per family (given, else from the model directory's config.json), with intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import png_colours

from lingdiag import RunConfig, evaluate
from lingdiag.errors import ConfigError
from lingdiag.figures import PALETTE
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.records import GenerationRequest
from lingdiag.report.html import render_html
from lingdiag.report.scaling import parse_families, points, scaling_figure
from lingdiag.report.tables import tables


class SizedMock(MockBackend):
    """A mock backend recording a parameter count and a model directory, as the hf backend does."""

    def __init__(self, name: str, n_params: int, path: Path) -> None:
        super().__init__(self.answer, name=name)
        self.n_params, self.path = n_params, path

    @staticmethod
    def answer(req: GenerationRequest) -> str:
        return "True" if len(req.messages[-1].content) % 3 else "False"

    @property
    def identity(self) -> dict[str, str]:
        return {**super().identity, "n_params": str(self.n_params), "path": str(self.path)}


def test_a_built_in_suite_gets_the_scaling_figure(tmp_path: Path) -> None:
    runs = []
    for name, size, kind in (("a-small", 1e8, "llama"), ("a-large", 1e9, "llama"), ("b", 5e8, "gemma3_text")):
        model_dir = tmp_path / f"{name}-weights"
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps({"model_type": kind}))
        evaluate(RunConfig(suite="imperfective", model=name, axes={"strategy": ["zero-shot"]}, limit=24),
                 SizedMock(name, int(size), model_dir), tmp_path / name)
        runs.append(tmp_path / name)
    loaded = load_runs(runs)
    found = points("imperfective", loaded, {})
    # Families by their readable names (transformers' model_type is a key: gemma3_text).
    assert sorted((p.family, p.n_params) for p in found) == [("Gemma 3", 5e8), ("Llama", 1e8), ("Llama", 1e9)]
    assert {p.condition for p in found} == {"zero-shot"} and all(p.ci95 is not None for p in found)
    assert scaling_figure("imperfective", loaded[:1], {}) is None  # one size: no figure
    figure = scaling_figure("imperfective", loaded, {})
    assert figure is not None and figure.png.startswith(b"\x89PNG") and "a-large 1B" in figure.caption
    page = render_html(tables(loaded), loaded, {"b": "Gemma"})
    assert "imperfective: tbr_C by model size" in page
    assert {p.family for p in points("imperfective", loaded, {"b": "Gemma"})} == {"Llama", "Gemma"}


def test_a_family_keeps_its_colour_in_a_panel_another_family_is_missing_from(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = []
    both = ["zero-shot", "dap"]
    for name, size, kind, strategies in (("a", 1e8, "llama", ["zero-shot"]), ("b-small", 2e8, "qwen2", both),
                                         ("b-large", 2e9, "qwen2", both)):
        model_dir = tmp_path / f"{name}-weights"
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps({"model_type": kind}))
        evaluate(RunConfig(suite="imperfective", model=name, axes={"strategy": strategies}, limit=12),
                 SizedMock(name, int(size), model_dir), tmp_path / name)
        runs.append(tmp_path / name)
    figure = scaling_figure("imperfective", load_runs(runs), {})
    assert figure is not None
    # Panels zero-shot (Llama, Qwen2) then dap (Qwen2 alone): Qwen2 is the second colour in both.
    assert {PALETTE[0], PALETTE[1]} <= png_colours(figure.png)
    dap = png_colours(figure.png, right_of=0.55)
    assert PALETTE[1] in dap and PALETTE[0] not in dap


@pytest.mark.parametrize("option", ["smollm2", "=x", "a="])
def test_a_family_option_is_model_equals_family(option: str) -> None:
    with pytest.raises(ConfigError, match="expected MODEL=FAMILY"):
        parse_families([option])
