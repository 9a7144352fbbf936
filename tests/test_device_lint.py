"""Every tensor and generator the transformers backend and the similarity analysis make names its device.

A bare ``torch.tensor(...)`` lands on the CPU and crashes at the first operation with a CUDA
model; CI has no GPU, so this whole-tree check is what catches such a regression.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "lingdiag"
CHECKED = [*sorted((SRC / "models" / "hf").glob("*.py")), SRC / "suites" / "imperfective" / "similarity.py"]
CONSTRUCTORS = {"tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "rand",
                "randn", "randint", "randperm", "Generator"}
"""torch functions that make a tensor (or a generator) from nothing but Python values: the ``_like``
variants and operations on tensors inherit their input's device."""


def undeviced(source: str) -> list[int]:
    """Lines of ``torch.<constructor>(...)`` calls in ``source`` without a ``device=`` argument."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
            and node.func.attr in CONSTRUCTORS and not any(k.arg == "device" for k in node.keywords)]


def test_the_lint_finds_a_constructor_without_a_device() -> None:
    source = "import torch\nx = torch.tensor([1])\ny = torch.zeros(2, device=x.device)\ng = torch.Generator()\n"
    assert undeviced(source) == [2, 4]


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.name)
def test_every_constructor_names_its_device(path: Path) -> None:
    assert undeviced(path.read_text(encoding="utf-8")) == [], f"{path}: a tensor constructor without device="
