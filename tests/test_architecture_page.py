"""docs/ARCHITECTURE.md's mechanical claims, checked against the code: the root holds at most 12
modules and the page lists each with names its module defines; each package's row names modules it
has and names they define; every registry is listed; every path it gives exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "lingdiag"
PAGE = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
IDENTIFIER = re.compile(r"(?<!like )`([A-Za-z_][A-Za-z0-9_.]*)(?:\(\))?`")
"""A name in backticks, not one a row compares with (``passed whole like `ScoringPolicy```)."""
FILES = (".json", ".jsonl", ".md", ".yaml", ".py", ".toml")


def _rows(heading: str) -> dict[str, str]:
    """The first cell of each row of the table under ``heading`` → the row's last cell."""
    block = PAGE.split(heading, 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in ("|" + block).splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[-1]
    return rows


def _defined(paths: list[Path]) -> set[str]:
    """Every name a module binds at its top level or in a class body (functions, classes, constants,
    imports re-exported), and the attributes ``self.x`` of its classes."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[-1])
    return names


def test_the_root_holds_at_most_twelve_modules_and_the_page_lists_exactly_them() -> None:
    modules = sorted(p.name for p in SRC.glob("*.py"))
    assert len(modules) <= 12, modules
    assert sorted(_rows("## Package map")) == modules


@pytest.mark.parametrize("module", sorted(p.name for p in SRC.glob("*.py")))
def test_each_name_a_root_row_gives_is_defined_in_its_module(module: str) -> None:
    named = {m.group(1) for m in IDENTIFIER.finditer(_rows("## Package map")[module])}
    named = {n for n in named if "." not in n and n != "lingdiag"}
    missing = named - _defined([SRC / module])
    assert not missing, f"docs/ARCHITECTURE.md says {module} holds {sorted(missing)}"


PACKAGE_ROWS = _rows("Packages:")


@pytest.mark.parametrize("package", sorted(PACKAGE_ROWS))
def test_each_name_a_package_row_gives_is_one_of_its_modules_or_defined_there(package: str) -> None:
    path = SRC / package.rstrip("/")
    assert (path / "__init__.py").is_file(), f"no package {package}"
    files = list(path.rglob("*.py"))
    modules = {p.stem for p in files} | {p.name for p in path.rglob("*") if p.is_dir()}
    named = {m.group(1) for m in IDENTIFIER.finditer(PACKAGE_ROWS[package]) if not m.group(1).endswith(FILES)}
    named = {n.split(".")[-1] for n in named if not n.startswith(("lingdiag", "rundir.", "report.", "models."))}
    missing = {n for n in named if n not in modules} - _defined(files) - {"view", "hf", "openai"}
    assert not missing, f"docs/ARCHITECTURE.md says {package} holds {sorted(missing)}"


def test_every_registry_is_listed() -> None:
    found = set()
    for path in SRC.rglob("*.py"):
        found |= set(re.findall(r"^([A-Z_]+)\s*:\s*Registry\[", path.read_text(encoding="utf-8"), re.M))
    listed = PAGE.split("- **Registries**", 1)[1].split("\n- ", 1)[0]
    assert found and not {name for name in found if f"`{name}`" not in listed}


def test_every_path_the_page_gives_exists() -> None:
    paths = set(re.findall(r"`((?:src|tests|docs|bench)/[^`*]+|[a-z_]+/[a-z_/]+\.py)`", PAGE))
    missing = [p for p in sorted(paths) if not any((base / p).exists() for base in (ROOT, SRC, SRC.parent))]
    assert paths and not missing, missing
