"""``lingdiag cache stats``: a table for people, JSON only with ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import lingdiag

from lingdiag.models.cache import ResponseCache
from lingdiag.records import Generation


def test_cache_stats_prints_a_table_and_json_only_when_asked(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    cache.put_many([(f"k{i}", "smol\x1b[2J[red]", Generation(f"True {i}")) for i in range(3)])
    table = lingdiag(tmp_path, "cache", "stats")
    assert table.returncode == 0, table.stderr
    assert not table.stdout.lstrip().startswith("{"), table.stdout
    assert "responses.sqlite" in table.stdout and "Generation" in table.stdout
    assert "smol\\x1b[2J[red]" in table.stdout and "\x1b" not in table.stdout  # a model name stays plain text
    as_json = lingdiag(tmp_path, "cache", "stats", "--json")
    stats = json.loads(as_json.stdout)
    assert [(e["model"], e["kind"], e["count"]) for e in stats["entries"]] == [("smol\x1b[2J[red]", "Generation", 3)]


def test_cache_stats_says_when_the_cache_is_empty(tmp_path: Path) -> None:
    proc = lingdiag(tmp_path, "cache", "stats")
    assert proc.returncode == 0 and "no cached responses" in proc.stdout, proc.stdout + proc.stderr
