"""One colour per model for a whole report (lingdiag.figures.model_colours)."""

from __future__ import annotations

from lingdiag.figures import model_colours


def test_a_model_keeps_its_colour_whatever_a_figure_draws_first() -> None:
    models = ["qwen-7b", "smollm2-135m", "gemma3-270m"]
    first, reordered = model_colours(models), model_colours(reversed(models + models))
    assert first == reordered and len(set(first.values())) == 3
    assert first == {"gemma3-270m": "C0", "qwen-7b": "C1", "smollm2-135m": "C2"}
