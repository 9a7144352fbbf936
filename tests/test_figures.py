"""One colour per model for a whole report (lingdiag.figures.ModelColours)."""

from __future__ import annotations

from lingdiag.figures import PALETTE, ModelColours


def test_a_model_keeps_its_colour_whatever_a_figure_draws_first() -> None:
    models = ["qwen-7b", "smollm2-135m", "gemma3-270m"]
    first, reordered = ModelColours.of(models), ModelColours.of(reversed(models + models))
    assert first == reordered and len(set(first.by_model.values())) == 3
    assert dict(first.by_model) == {"gemma3-270m": PALETTE[0], "qwen-7b": PALETTE[1], "smollm2-135m": PALETTE[2]}


def test_a_figures_key_lists_the_models_it_drew_in_the_reports_colours() -> None:
    colours = ModelColours.of(["a", "b", "c"])
    assert colours.legend(["c", "a", "c"]) == (("a", PALETTE[0]), ("c", PALETTE[2]))
    assert colours["b"] == PALETTE[1] and colours.legend([]) == ()


def test_the_palette_is_matplotlibs_default_cycle() -> None:
    import matplotlib
    from matplotlib.colors import to_hex

    assert list(PALETTE) == [to_hex(c) for c in matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]]
