"""Every package says what it holds: its ``__init__`` docstring names each of its modules, and
the architecture page lists every package and root module (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "lingdiag"
PACKAGES = sorted(p.parent for p in SRC.rglob("__init__.py") if p.parent != SRC)


def _modules(package: Path) -> list[str]:
    return sorted({p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
                  | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()})


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(SRC)))
def test_package_docstring_names_its_modules(package: Path) -> None:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    missing = [m for m in _modules(package) if not re.search(rf"\b{m}\b", doc)]
    assert doc and not missing, f"{package.relative_to(SRC)}/__init__.py docstring lacks {missing}"


def test_architecture_page_lists_every_package_and_root_module() -> None:
    page = (SRC.parents[1] / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    top = [f"`{p.name}/`" for p in PACKAGES if p.parent == SRC]
    root = [f"`{p.name}`" for p in SRC.glob("*.py")]
    missing = [name for name in top + root if name not in page]
    assert not missing, f"docs/ARCHITECTURE.md does not list {missing}"
