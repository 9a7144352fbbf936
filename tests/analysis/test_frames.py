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


def test_load_returns_log_likelihood_prompts_and_outputs(tmp_path):
    # ExpliCa's perplexity task scores each connective's sentence: four log-likelihood requests per item.
    mock = MockBackend(loglik_fn=lambda r: -float(len(r.continuation)))
    evaluate(RunConfig(suite="explica", model="mock", axes={"task": ["perplexity"]}, limit=3), mock, tmp_path / "p")
    df = load(tmp_path / "p")
    assert len(df) == 3
    for prompt, output in zip(df["prompt"], df["output"], strict=True):
        assert prompt.count("[continuation]\n") == 4 and prompt.count("\n\n---\n\n") == 3
        assert output.startswith("log-prob -") and output.count("token(s)") == 4


def test_load_takes_a_list_of_runs_and_refuses_other_types_in_one_line(tmp_path):
    import pytest

    from lingdiag.errors import ConfigError

    for name in ("a", "b"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot"]}, limit=2),
                 MockBackend(generate_fn=lambda r: "True"), tmp_path / name)
    listed = load([tmp_path / "a", str(tmp_path / "b")])
    assert len(listed) == 4 and set(listed["run"]) == {str(tmp_path / "a"), str(tmp_path / "b")}
    with pytest.raises(ConfigError, match="^lingdiag.load takes run directories .* not int$"):
        load(3)  # type: ignore[arg-type]  # the wrong type is the case: a one-line error at run time


def test_as_text_renders_every_shape_a_record_holds():
    from lingdiag.records import as_text

    chat = [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Premise?"}]
    assert as_text("plain") == "plain" and as_text(None) == ""
    assert as_text(chat) == "[system]\nBe strict.\n\n[user]\nPremise?"
    assert as_text({"context": "", "continuation": "It rained, so"}) == "[continuation]\nIt rained, so"
    assert as_text({"context": "Q:", "continuation": " yes"}) == "Q:\n\n[continuation]\n yes"
    assert as_text({"messages": chat, "continuation": "True"}).endswith("[user]\nPremise?\n\n[continuation]\nTrue")
    assert as_text({"logprob": -3.5, "n_tokens": 2, "is_greedy": True}) == "log-prob -3.5 over 2 token(s), greedy"
    assert as_text({"error": "timeout"}) == "[error]\ntimeout"
    assert as_text({"text": "True", "rendering": "no system turn"}) == "True\n\n[rendering]\nno system turn"
    assert as_text({"other": 1}) == '{\n  "other": 1\n}'
