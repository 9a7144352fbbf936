"""The official ExpliCa file (pinned commit, SHA-256) and the dataset loader."""

from __future__ import annotations

from pathlib import Path

from lingdiag.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.suite import Dataset
from lingdiag.suites.explica import data

OFFICIAL_FILE = OfficialFile(
    url=f"{RAW}/martinadh/ExpliCa/87f8706e3869ca2f2a85a0d7d077a61f729f2a63/data/explica/explica.csv",
    local="explica/explica.csv",
    sha256="28e6078164da1f315a52eebb6748701031cd016745e36296b691ef27eac23f63",
)
register_official("explica", (OFFICIAL_FILE,))


def load(spec: str) -> Dataset:
    """``builtin`` (the project's own pairs), ``official`` (fetched) or a CSV/TSV path."""
    if spec == "builtin":
        return Dataset("builtin", data.builtin_items(), source={"builtin": "lingdiag explica_builtin.yaml"})
    path = official_path("explica", OFFICIAL_FILE.local) if spec == "official" else Path(spec)
    return Dataset(spec, data.load_csv(path), source={str(path): OFFICIAL_FILE.sha256 if spec == "official" else ""})
