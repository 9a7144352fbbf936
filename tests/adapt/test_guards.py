"""Leakage and licence guards of ``lingdiag adapt`` on the real official files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.adapt.data import split_lemmas
from lingdiag.adapt.training import TrainingPlan, prepare
from lingdiag.errors import DatasetError
from lingdiag.suites.imperfective.data import load_json


def _official(shared_datasets: Path) -> str:
    return str(shared_datasets / "imperfective_nli" / "imperfectiveNLI.json")


def test_builder_training_set_leaks_nothing(shared_datasets: Path) -> None:
    plan = TrainingPlan("imperfective", "builder", eval_dataset=_official(shared_datasets), held_out=0.5, seed=3)
    result = prepare(plan)
    assert result.audit.clean and not result.audit.shared_sentences and not result.audit.shared_held_out
    assert result.audit.held_out_lemmas == 100 and 95 <= result.audit.trained_lemmas_in_eval <= 100
    # The packaged lexicon repeats 7 official sentences: the builder drops those items.
    assert result.dropped_shared > 0
    verbs = {i.tags["verb"] for i in result.items}
    assert not verbs & result.split.held_out and verbs <= result.split.trained
    assert "0 shared sentences, 0 shared held-out verbs" in result.audit.line("verb")
    # Seeded: the same plan gives the same split and items; another seed another split.
    assert prepare(plan).items == result.items
    assert prepare(TrainingPlan("imperfective", "builder", _official(shared_datasets), seed=4)).split != result.split


def test_crafted_overlap_is_refused(shared_datasets: Path, tmp_path: Path) -> None:
    official = _official(shared_datasets)
    rows = json.loads(Path(official).read_text(encoding="utf-8"))
    split = split_lemmas(load_json(Path(official)), "verb", 0.5, 0)
    held = next(r for r in rows if r["verb"] in split.held_out)
    crafted = tmp_path / "train.json"
    # A held-out verb with new sentences: refused for the lemma alone.
    crafted.write_text(json.dumps([{**held, "premise": "A brand new premise.", "hypothesis": "A new one."}]))
    with pytest.raises(DatasetError, match=r"train\.json: training set shares 1 held-out verb\(s\) \("):
        prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, seed=0))
    # A trained verb repeating an official sentence: refused for the sentence.
    trained = next(r for r in rows if r["verb"] in split.trained)
    crafted.write_text(json.dumps([{**trained, "hypothesis": "Something else entirely."}]))
    with pytest.raises(DatasetError, match=r"shares 1 sentence\(s\) \(first: "):
        prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, seed=0))
    # --held-out 1: no evaluation lemma may be trained on, even with new sentences.
    crafted.write_text(json.dumps([{**trained, "premise": "A brand new premise.", "hypothesis": "A new one."}]))
    prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, seed=0))
    with pytest.raises(DatasetError, match=r"held-out verb"):
        prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, held_out=1.0, seed=0))


def test_licence_forbidding_training_is_refused(shared_datasets: Path) -> None:
    explica = shared_datasets / "explica" / "explica.csv"
    with pytest.raises(DatasetError) as e:
        prepare(TrainingPlan("explica", str(explica), eval_dataset=str(explica)))
    assert str(e.value) == (f"{explica}: its licence (CC BY-NC-SA 4.0, not for training models) forbids "
                            "training models on it; choose a builder or another dataset")
    with pytest.raises(DatasetError, match=r"^explica/explica\.csv: its licence \(CC BY-NC-SA 4\.0, not for training"):
        prepare(TrainingPlan("explica", "official"))


def test_cli_prints_the_licence_refusal_in_one_line(shared_datasets: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    explica = shared_datasets / "explica" / "explica.csv"
    done = subprocess.run([sys.executable, "-m", "lingdiag", "adapt", "lora", "explica", "--model", "smollm2-135m",
                           "--out", str(tmp_path / "a"), "--steps", "1", "--train", str(explica),
                           "--eval-dataset", str(explica)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                          check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {explica}: its licence (CC BY-NC-SA 4.0, not for training models) forbids training models on it; "
        "choose a builder or another dataset"]
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("disguise", [
    lambda s: s.replace(" ", "\u00a0"),  # no-break spaces
    lambda s: s.replace(" ", " \u200b"),  # zero-width spaces
    lambda s: s.rstrip("."),  # the full stop dropped
    lambda s: s.rstrip(".") + " .",  # the full stop spaced
    lambda s: "\ufeff" + s.upper(),
])
def test_disguised_overlap_is_refused(shared_datasets: Path, tmp_path: Path, disguise: object) -> None:
    """Issue 35: a training sentence differing from an evaluation one only by invisible marks leaked."""
    official = _official(shared_datasets)
    rows = json.loads(Path(official).read_text(encoding="utf-8"))
    split = split_lemmas(load_json(Path(official)), "verb", 0.5, 0)
    trained = next(r for r in rows if r["verb"] in split.trained)
    crafted = tmp_path / "train.json"
    premise = disguise(trained["premise"])  # type: ignore[operator]
    assert premise != trained["premise"]
    crafted.write_text(json.dumps([{**trained, "premise": premise, "hypothesis": "Something else entirely."}]))
    with pytest.raises(DatasetError, match=r"shares 1 sentence\(s\)"):
        prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, seed=0))


@pytest.mark.parametrize("disguise", [" ", "\u200b", "\u00a0"])
def test_a_held_out_lemma_with_a_trailing_mark_is_still_held_out(shared_datasets: Path, tmp_path: Path,
                                                                 disguise: str) -> None:
    """Issue 44 item 11: a held-out verb written ``"build "`` passed the lemma leakage guard."""
    official = _official(shared_datasets)
    rows = json.loads(Path(official).read_text(encoding="utf-8"))
    split = split_lemmas(load_json(Path(official)), "verb", 0.5, 0)
    held = next(r for r in rows if r["verb"] in split.held_out)
    crafted = tmp_path / "train.json"
    crafted.write_text(json.dumps([{**held, "verb": held["verb"] + disguise, "premise": "A new premise.",
                                    "hypothesis": "A new hypothesis."}]))
    with pytest.raises(DatasetError, match=r"held-out verb"):
        prepare(TrainingPlan("imperfective", str(crafted), eval_dataset=official, seed=0))
