"""``lingdiag inspect RUN``: per condition, how many answers each parse rule took, with escaped
examples (a real run directory: answers from a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import lingdiag


def test_inspect_counts_parse_rules_with_escaped_examples(fake_api: Any, tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    run = ["run", "imperfective", "--model", f"openai:m@{fake_api.url}", "--out", out, "--no-cache"]
    # Chain-of-thought prompts get a schema echo with a terminal escape, the others a plain answer.
    fake_api.content = lambda body: ('\x1b[31m"label": "True / False / Unknown" | hi'
                                     if "step-by-step" in json.dumps(body) else "The answer is: True")
    assert lingdiag(tmp_path, *run, "--strategy", "zero-shot,cot", "--limit", "3").returncode == 0
    proc = lingdiag(tmp_path, "inspect", out, "--json", "--examples", "2")
    assert proc.returncode == 0, proc.stderr
    rules = json.loads(proc.stdout)
    assert {r: v["count"] for r, v in rules["zero-shot"].items()} == {"cue": 3}
    assert rules["zero-shot"]["cue"]["labels"] == {"True": 3}
    # An unparsed answer counts under the reason the reader refused it.
    assert {r: v["count"] for r, v in rules["cot"].items()} == {"unparsed: several-labels": 3}
    assert len(rules["cot"]["unparsed: several-labels"]["examples"]) == 2
    table = lingdiag(tmp_path, "inspect", out, "--examples", "1")
    assert table.returncode == 0 and "\x1b" not in table.stdout and "\\u001b[31m" in table.stdout
    assert "| unparsed: several-labels | 3 | unparsed 3 |" in table.stdout and "\\| hi" in table.stdout


def test_rules_table_escapes_every_cell() -> None:
    from lingdiag.report.rules import rules_markdown

    rules = {"c": {"rule|x": {"count": 2, "labels": {"True": 2}, "examples": ["a|b", "c"]}}}
    assert rules_markdown(rules) == ("### c\n\n| Rule | Answers | Labels | Examples |\n|---|---|---|---|\n"
                                     "| rule\\|x | 2 | True 2 | `a\\|b`<br>`c` |\n")
