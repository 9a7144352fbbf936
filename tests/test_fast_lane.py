"""The fast lane's weights check (``fast_lane.py``), run on a tiny project of its own: a test not
marked slow that loads a transformers model fails, even when it swallows the error; a slow one
reaches the real ``from_pretrained`` (which finds no weights in a
directory holding only a config).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CASES = '''
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM, LlamaConfig

MODEL = Path(__file__).parent / "model"  # a config without weights: the load gets as far as the weights
LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2).save_pretrained(MODEL)


def test_fast_load():
    AutoModelForCausalLM.from_pretrained(MODEL)


def test_fast_load_swallowed():
    try:
        AutoModelForCausalLM.from_pretrained(MODEL)
    except Exception:
        pass


def test_fast_without_weights():
    assert True


@pytest.mark.slow
def test_slow_load_reaches_transformers():
    with pytest.raises(OSError):
        AutoModelForCausalLM.from_pretrained(MODEL)
'''


def test_a_fast_test_loading_weights_fails(tmp_path: Path) -> None:
    shutil.copy(TESTS / "fast_lane.py", tmp_path / "fast_lane.py")
    (tmp_path / "conftest.py").write_text(
        "from fast_lane import pytest_configure, pytest_runtest_makereport, pytest_runtest_protocol  # noqa: F401\n")
    (tmp_path / "test_cases.py").write_text(CASES)
    (tmp_path / "pytest.ini").write_text('[pytest]\nmarkers =\n    slow: slow\n')
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 1, out
    assert "FAILED test_cases.py::test_fast_load " in out
    assert "test_cases.py::test_fast_load_swallowed" in out and "loaded model weights in the fast lane" in out
    assert f"from_pretrained(PosixPath('{tmp_path / 'model'}'))" in out
    assert "test_fast_without_weights" not in out.split("short test summary")[1]
    assert "test_slow_load_reaches_transformers" not in out.split("short test summary")[1]
    assert "3 passed" in out or "2 passed" in out
