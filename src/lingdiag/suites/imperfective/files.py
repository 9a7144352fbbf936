"""The official ImperfectiveNLI file (pinned commit, SHA-256) and the dataset loader."""

from __future__ import annotations

from pathlib import Path

from lingdiag.io.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.suite import Dataset
from lingdiag.suites.imperfective import data

OFFICIAL_FILE = OfficialFile(
    url=f"{RAW}/boleima/ImperfectiveParadox/f25d08e0d63bdafafc891d37d687c9162edfe4c0/data/imperfectiveNLI.json",
    local="imperfective_nli/imperfectiveNLI.json",
    sha256="ddd01d06b18b9bab24abb5bc92a8eb740bb145123658fa9a10bd86e38b4bdb5a",
)
register_official("imperfective", (OFFICIAL_FILE,))


def load(spec: str) -> Dataset:
    """``builtin`` (generated), ``official`` (fetched) or a JSON file in the official format."""
    if spec == "builtin":
        return Dataset("builtin", data.builtin_items(), source={"builtin": "lingdiag imperfective lexicon"})
    path = official_path("imperfective", OFFICIAL_FILE.local) if spec == "official" else Path(spec)
    return Dataset(spec, data.load_json(path), source={str(path): OFFICIAL_FILE.sha256 if spec == "official" else ""})
