"""§5.4 representational analysis: phrase alignment, and real embeddings from SmolLM2."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import ConfigError
from lingdiag.models.hf import HFBackend
from lingdiag.models.mock import MockBackend
from lingdiag.records import Item, ResultRow
from lingdiag.suites.imperfective.data import TELIC_CLASSES, builtin_items, load_json
from lingdiag.suites.imperfective.similarity import (
    Encoder,
    PhrasePair,
    Span,
    cosine,
    layer_sweep,
    pair_similarities,
    phrase_pair,
    phrase_pairs,
    similarity_analysis,
    tbr_by_class,
)


def item(premise: str, hypothesis: str, group: str = "C") -> Item:
    return Item("x", {"premise": premise, "hypothesis": hypothesis}, None,
                {"group": group, "verb_class": "Creation", "verb": "v"})


@pytest.mark.parametrize(("premise", "hypothesis", "progressive", "past"), [
    ("The carpenter was building a gazebo.", "The carpenter built a gazebo.", "was building", "built"),
    ("The buffalo were roaming the plains.", "The buffalo roamed the plains.", "were roaming", "roamed"),
    ("The puppy was shivering.", "The puppy shivered.", "was shivering", "shivered"),
    ("The boy was filling the balloon with water.", "The boy filled the balloon.", "was filling", "filled"),
    ("He was taking off the lid.", "He took off the lid.", "was taking", "took"),
])
def test_phrase_pair_finds_the_verb_phrases(premise: str, hypothesis: str, progressive: str, past: str) -> None:
    pair = phrase_pair(item(premise, hypothesis))
    assert pair is not None
    assert (pair.progressive.phrase, pair.past.phrase) == (progressive, past)


@pytest.mark.parametrize(("premise", "hypothesis"), [
    ("The carpenter built a gazebo.", "The carpenter built a gazebo."),  # nothing differs
    ("The carpenter is building a gazebo.", "The carpenter built a gazebo."),  # no was/were
    ("The carpenter was a builder.", "The carpenter built a gazebo."),  # "was" alone is no progressive
])
def test_phrase_pair_rejects_other_shapes(premise: str, hypothesis: str) -> None:
    assert phrase_pair(item(premise, hypothesis)) is None


def test_every_builtin_verb_aligns() -> None:
    pairs, skipped = phrase_pairs(builtin_items())
    assert len(pairs) == 200 and skipped == []
    assert {p.verb_class for p in pairs} == {*TELIC_CLASSES, "Activity"}
    assert all(p.progressive.phrase.split()[0] in ("was", "were") for p in pairs)


def test_every_official_verb_aligns(shared_datasets: Path) -> None:
    pairs, skipped = phrase_pairs(load_json(shared_datasets / "imperfective_nli" / "imperfectiveNLI.json"))
    assert len(pairs) == 200 and skipped == []
    by_id = {p.item_id: p for p in pairs}
    assert (by_id["C_017"].progressive.phrase, by_id["C_017"].past.phrase) == ("was filling", "filled")


def test_cosine() -> None:
    assert cosine([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert cosine([1, 0], [0, 1]) == 0.0 and cosine([1, 0], [-1, 0]) == -1.0
    assert math.isnan(cosine([0, 0], [1, 1]))


def test_tbr_by_class_averages_models() -> None:
    zero, cot = {"strategy": "zero-shot"}, {"strategy": "cot"}
    rows = [ResultRow("m1", "zero-shot", zero, {"by_class": {"tbr_C": {"Creation": 1.0, "Consumption": 0.5}}}),
            ResultRow("m2", "zero-shot", zero, {"by_class": {"tbr_C": {"Creation": 0.5, "Consumption": math.nan}}}),
            ResultRow("m2", "cot", cot, {"by_class": {"tbr_C": {"Creation": 0.0}}})]
    assert tbr_by_class(rows) == {"Creation": 0.75, "Consumption": 0.5}
    with pytest.raises(ConfigError, match="no run has condition 'dap'"):
        tbr_by_class(rows, "dap")


# -- the real model ---------------------------------------------------------------------------


def sample_items() -> list[Item]:
    """Two group C items per telic class and two group D (Activity) items."""
    out: list[Item] = []
    for it in builtin_items():
        cls = it.tags["verb_class"]
        if it.tags["group"] in "CD" and sum(o.tags["verb_class"] == cls for o in out) < 2:
            out.append(it)
    return out


@pytest.mark.slow
def test_smollm2_similarities(smollm2: HFBackend) -> None:
    assert smollm2.identity["n_params"] == "134515008"  # recorded by the transformers backend
    encoder = Encoder(smollm2.model, smollm2.tokenizer, "smollm2-135m")
    tbr = {"Change_of_State": 0.9, "Consumption": 0.8, "Creation": 0.95, "Motion_to_Goal": 0.5}
    result = similarity_analysis(sample_items(), encoder, layer=-1, tbr=tbr)
    assert len(result.pairs) == 10 and result.skipped == ()
    assert all(-1.0 <= p.cosine <= 1.0 for p in result.pairs)
    assert all(p.cosine < 0.999 for p in result.pairs)  # "was building" is not "built"
    assert set(result.by_class) == {*TELIC_CLASSES, "Activity"}
    assert all(s.n == 2 and -1 <= s.median <= 1 for s in result.by_class.values())
    assert result.correlation is not None and result.correlation.n == 4 and -1 <= result.correlation.r <= 1
    json.dumps(result.to_json())

    # The same phrase gives similarity 1: identical spans, and (causal model) the same left
    # context followed by different words, batched together with padding.
    a = Span("The boy was running home quickly.", 8, 19)
    b = Span("The boy was running.", 8, 19)
    assert a.phrase == b.phrase == "was running"
    same = pair_similarities(encoder, [PhrasePair("s", "run", "Activity", a, a),
                                       PhrasePair("t", "run", "Activity", a, b)])
    assert [round(s.cosine, 5) for s in same] == [1.0, 1.0]
    # The embedding layer (0) also works; a layer past the last is an error.
    first = pair_similarities(encoder, [PhrasePair("u", "run", "Activity", a, Span("The boy ran.", 8, 11))], layer=0)
    assert -1 <= first[0].cosine < 1
    with pytest.raises(ConfigError, match="layer 99 out of range"):
        pair_similarities(encoder, [PhrasePair("s", "run", "Activity", a, b)], layer=99)
    # A sweep gives each layer exactly what the one-layer analysis gives.
    sweep = layer_sweep(sample_items(), encoder, [0, 15, -1], tbr=tbr)
    assert [r.layer for r in sweep] == [0, 15, -1] and sweep[2] == result
    assert sweep[0].by_class != sweep[1].by_class


@pytest.mark.slow
def test_cli_similarity_with_a_run(tmp_path: Path) -> None:
    """Loads the embedded model through ``load_encoder`` and correlates with a real run's TBR_C."""
    cfg = RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot"]})
    evaluate(cfg, MockBackend(lambda r: "True" if "build" in r.messages[-1].content else "Unknown"), tmp_path / "run")
    cmd = [sys.executable, "-c", "from lingdiag.cli import main; main()", "imperfective", "similarity",
           "--model", "smollm2-135m", "--limit", "8", "--run", str(tmp_path / "run")]
    text = subprocess.run(cmd + ["--layer", "6"], capture_output=True, text=True, check=True).stdout
    assert "(smollm2-135m, layer 6)" in text and "| Verb class | n | Median cosine |" in text
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and "Verb class" not in line]
    assert sum(int(r[1]) for r in rows) == 8  # 8 items spread over groups C and D
    assert "median similarity vs TBR_C" in text
    sweep = subprocess.run(cmd + ["--layer", "all", "--json"], capture_output=True, text=True, check=True).stdout
    layers = json.loads(sweep)
    assert [r["layer"] for r in layers] == list(range(31))  # embeddings + 30 layers of SmolLM2-135M
    assert all(r["correlation"] is not None for r in layers)
    bad = subprocess.run([*cmd[:5], "--model", "gpt2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "hf:<hub id or directory>" in bad.stderr
