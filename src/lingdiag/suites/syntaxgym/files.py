"""SyntaxGym's official suites (pinned commit; SHA-256 where a reference copy was checked) and the loader."""

from __future__ import annotations

from pathlib import Path

from lingdiag.errors import DatasetError
from lingdiag.io.fetch import RAW, OfficialFile, datasets_dir, fetched, register_official
from lingdiag.records import Item
from lingdiag.suite import Dataset
from lingdiag.suites.syntaxgym.data import read_suite

COMMIT = "43f1f86b746254406dafc89bd17b9d4976607ef6"
SUITES = (
    "center_embed", "center_embed_mod", "cleft", "cleft_modifier", "fgd-embed3", "fgd-embed4", "fgd_hierarchy",
    "fgd_object", "fgd_pp", "fgd_subject", "mvrr", "mvrr_mod", "nn-nv-rpl", "npi_orc_any", "npi_orc_ever",
    "npi_src_any", "npi_src_ever", "npz_ambig", "npz_ambig_mod", "npz_obj", "npz_obj_mod", "number_orc",
    "number_prep", "number_src", "reflexive_orc_fem", "reflexive_orc_masc", "reflexive_prep_fem",
    "reflexive_prep_masc", "reflexive_src_fem", "reflexive_src_masc", "subordination", "subordination_orc-orc",
    "subordination_pp-pp", "subordination_src-src",
)
"""The 34 suites of Hu et al. (2020)."""
SHA256 = {
    "fgd_object": "64045162cd8158f07bcf9efc9b2ba9ad60324009f71bae8d58bb9a841e72eee5",
    "mvrr": "5201adc7f9019caffc0bc54ca2d71db601f187d5a0dce55df0e90fd5592b2581",
    "npi_orc_any": "96f6bd4ab779633f4837132d2a17d89568e46b154a7052636da208ac360f7685",
    "number_src": "8c3a1db336d275fe7d10dac418450f83fc40c5456e94beb3a547ce314753f6df",
    "reflexive_orc_fem": "d18ce6a3a970b1356721ed8415e400b89020b5e0d76a3017d6be28689404b7b7",
    "subordination": "065fc960d7346cd96f152c389c36816bf330b415661319e7dc6022ff610855b4",
}
"""Checksums of the suites whose reference copies were verified; the others rely on the pinned commit."""

register_official("syntaxgym", tuple(
    OfficialFile(url=f"{RAW}/cpllab/syntactic-generalization/{COMMIT}/test_suites/json/{s}.json",
                 local=f"syntaxgym/{s}.json", sha256=SHA256.get(s, ""))
    for s in SUITES))

FETCHED = "syntaxgym"
"""``--dataset syntaxgym``: the suites ``lingdiag data fetch syntaxgym`` downloaded."""


def load(spec: str) -> Dataset:
    """``syntaxgym`` (fetched), a directory of suite files, or one suite file."""
    if spec == FETCHED:
        files = fetched("syntaxgym")
        if not files:
            raise DatasetError("no SyntaxGym suite downloaded yet; run: lingdiag data fetch syntaxgym "
                               "(or --only NAME,... for some)", path=datasets_dir() / "syntaxgym")
    else:
        path = Path(spec)
        if path.is_dir():
            files = sorted(path.glob("*.json"))
            if not files:
                raise DatasetError("no suite file (*.json) in this directory", path=path)
        elif path.is_file():
            files = [path]
        else:
            raise DatasetError("no such file or directory", path=path)
    items: list[Item] = []
    for f in files:
        items += read_suite(f)
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise DatasetError(f"item {it.id!r} appears twice (two files of one suite name?)", field="item_number")
        seen.add(it.id)
    return Dataset(spec, items, source={str(f): SHA256.get(f.stem, "") if spec == FETCHED else "" for f in files})
