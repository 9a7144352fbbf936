"""``lingdiag.load``: every record of several runs as one tidy DataFrame."""

from lingdiag import RunConfig, evaluate, load
from lingdiag.models.mock import MockBackend


def test_load_gives_one_row_per_record_with_axes_tags_and_text(tmp_path):
    mock = MockBackend(generate_fn=lambda r: "True." if "build" in r.messages[-1].content else "maybe")
    axes = {"strategy": ["zero-shot", "dap"]}
    evaluate(RunConfig(suite="imperfective", model="mock", axes=axes), mock, tmp_path / "a")
    evaluate(RunConfig(suite="explica", model="mock", axes={"task": ["cloze"], "shots": ["0"], "decoding": ["greedy"]}),
             MockBackend(generate_fn=lambda r: "so"), tmp_path / "b")
    df = load(tmp_path / "a", str(tmp_path / "b"))
    assert len(df) == 2 * 400 + 72 and set(df["suite"]) == {"imperfective", "explica"}  # builtin sizes
    imp = df[df["suite"] == "imperfective"]
    assert set(imp["axis.strategy"]) == {"zero-shot", "dap"} and set(imp["tag.group"]) == {"A", "B", "C", "D"}
    assert imp["unparsed"].sum() == (imp["output"] == "maybe").sum() > 0
    assert (imp.loc[imp["output"] == "True.", "label"] == "True").all()
    assert imp["prompt"].str.startswith("[system]\n").all()
    assert df.groupby(["run", "condition"])["correct"].mean().notna().all()
