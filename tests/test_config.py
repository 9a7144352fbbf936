"""Hostile and damaged --config files: one-line errors, never a traceback or a memory blow-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError

SRC = str(Path(__file__).resolve().parents[1] / "src")

BOMB = """suite: imperfective
model: mock
model_options:
  extra_body:
    a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
    h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
    i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""

CASES = {
    "nested-bomb": (BOMB.encode(), r"^\S*nested-bomb\.yaml, line 6, column 12: YAML aliases \(\*a\) are not accepted"),
    "top-bomb": (b"a: &a [x, x]\nb: [*a, *a]\n", r"line 2, column 5: YAML aliases \(\*a\)"),
    "latin-1": ("suite: imperfective\nmodel: caf\xe9\n".encode("latin-1"), r"latin-1\.yaml: not UTF-8 text"),
    "deep": (b"x: " + b"[" * 100_000 + b"]" * 100_000 + b"\n", r"deep\.yaml, line 1, column \d+: nested more than"),
    "deep-block": (("".join(" " * k + f"k{k}:\n" for k in range(5000)) + " " * 5000 + "v\n").encode(),
                   r"nested more than 64 levels deep"),
    "torn": (b"suite: imperfective\nmodel: [mock\n", r"torn\.yaml, line \d+, column \d+: not valid YAML"),
    "twice": (b"suite: imperfective\nmodel: mock\nlimit: 3\nmodel: other\n",
              r"twice\.yaml, line 4: key 'model' given twice in one mapping \(first on line 2\)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_config_file_is_a_config_error(tmp_path: Path, name: str) -> None:
    content, message = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as e:
        RunConfig.from_yaml(path)
    assert "\n" not in str(e.value)


def test_anchors_without_aliases_and_moderate_nesting_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("suite: imperfective\nmodel: mock\nmodel_options:\n  extra_body: &x {a: {b: {c: [1, 2]}}}\n")
    assert RunConfig.from_yaml(path).model_options == {"extra_body": {"a": {"b": {"c": [1, 2]}}}}


@pytest.mark.parametrize("name", ["nested-bomb", "latin-1", "deep"])
def test_the_command_line_prints_one_line_and_exits_2(tmp_path: Path, name: str) -> None:
    (tmp_path / "c.yaml").write_bytes(CASES[name][0])
    proc = subprocess.run([sys.executable, "-m", "lingdiag", "run", "imperfective", "--config", "c.yaml"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC, "LINGDIAG_CACHE": str(tmp_path)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error: c.yaml")
