"""``adapt lora --out`` touches only what it owns (issue 35): an existing directory that is not
an adapter lingdiag made is refused before anything in it is deleted; a checkpoint record whose
``dir`` points elsewhere is refused, not resumed from and deleted; a second training on the same
directory is refused while the first holds it; a full disk while saving is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.adapt.examples import chat_examples
from lingdiag.adapt.lora import CHECKPOINT, LoraPlan, _checkpoint, train
from lingdiag.errors import RunError, WriteError
from lingdiag.rundir import RunStore
from lingdiag.suites.imperfective.data import builtin_items


def _train(smollm2: object, out: Path) -> Path:
    examples = chat_examples("imperfective", builtin_items()[::100], "zero-shot")
    return train(smollm2.loaded, examples, LoraPlan(steps=1, rank=2, batch_size=2), out)  # type: ignore[attr-defined]


def test_a_foreign_directory_is_refused_and_left_whole(smollm2: object, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    (out / "checkpoint-1").mkdir(parents=True)
    (out / "checkpoint-1" / "thesis.tex").write_text("years of work")
    (out / "adapter_config.json").write_text("{}")
    with pytest.raises(RunError, match="is not an adapter directory lingdiag made"):
        _train(smollm2, out)
    assert (out / "checkpoint-1" / "thesis.tex").read_text() == "years of work"
    assert (out / "adapter_config.json").read_text() == "{}"


@pytest.mark.slow
def test_a_checkpoint_dir_outside_out_is_refused(smollm2: object, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    out = _train(smollm2, tmp_path / "adapter")
    # The adapter's checkpoint record edited to point at another directory.
    (out / CHECKPOINT).write_text(json.dumps({"step": 1, "dir": "../elsewhere"}))
    with pytest.raises(RunError, match="not a checkpoint record lingdiag wrote"):
        _train(smollm2, out)
    assert (outside / "keep.txt").read_text() == "keep"


def test_a_second_training_on_a_held_directory_is_refused(smollm2: object, tmp_path: Path) -> None:
    out = tmp_path / "adapter"
    with RunStore(out).lock(), pytest.raises(RunError, match="in use by pid"):
        _train(smollm2, out)


def test_a_full_disk_while_saving_is_one_line(tmp_path: Path) -> None:
    class Full:
        def save_pretrained(self, path: str) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(WriteError, match="No space left on device"):
        _checkpoint(tmp_path, 1, Full(), None)
    assert not (tmp_path / "checkpoint-1").exists()
