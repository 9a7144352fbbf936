"""The official release's files (pinned commit, SHA-256), the axis values, and the loader
of the built-in, official and user datasets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.io.fetch import RAW, OfficialFile, official_path, register_official
from lingdiag.records import Item
from lingdiag.suite import Dataset
from lingdiag.suites.cxnli import authors, data, templates

_COMMIT = "82699473b5bd2295d87524a4df1a148ec4ce4b1f"
_SHA256 = {
    "CxNLI/CxNLI_3_examples_test.tsv": "98d3dc8d8526b4714ec8df98f822cfe15ad706660bf0a324ba0cf7a4447d5bc0",
    "CxNLI/CxNLI_1_example_train.csv": "ab0c5e6c95520341dbdfae53ad23d67f9b4a5b05da52b5e8a2fb4241dbc2f887",
    "CxNLI/CxNLI_3_examples_train.csv": "2b653532accdc9fe972d57230fc0c7d0face4f1c95b7d6950bc7a8d3c1f2a885",
    "CxNLI/SNLI_1_example_train.csv": "11c1c9efd9f524156121984bdb23c62b51da2d4726974894d6c3ac954e04739f",
    "CxNLI/SNLI_3_examples_train.csv": "afd062992f574e05ceaa7fb3263b408738a41303848bb56bbfb5e75180cd348f",
    "CxNLI_distinction/CxNLI_distinction_test.tsv": "6506e75f9938ba59f7578b274d9d7e5ded85498b581d481358283fe158783e62",
    "CxNLI_distinction/CxNLI_1_example_train_CxNLI_distinction_train.csv":
        "6e22d8dc88b3c3f574bdc5fa980d5d4a3d73f90d7f696b1bcc14f8219c8f525e",
    "CxNLI_distinction/CxNLI_distinction_train.tsv": "42f25ec8985258c6cc64756b54bf6fc235ab071e0163ea0d32c4539ad6c064a5",
    # The subsets the authors ran o1-preview on (their README; the 16-triple file in two formats).
    "o1-preview/CxNLI_3_examples_test104.csv": "706b469a6ef19468c9a8ae1c68a44ec512e7c0811eac72cf764c8522adc28b5d",
    "o1-preview/CxNLI_3_examples_test16.csv": "743aab888e6b51b3b423a3d83c8d3cf660ef549837cb63d234585a7b4e3f5a8e",
    "o1-preview/CxNLI_3_examples_test16.tsv": "2be392935971ffbbb4199f35f5ffdb0fc29571905025573980ea8ae173583e52",
    "o1-preview/CxNLI_distinction_test10.csv": "65ff506b370b256ce5282dc43401fa6b49ffa55ee83e75202498eb45e17fb6d5",
}
register_official("cxnli", tuple(
    OfficialFile(f"{RAW}/melissatorgbi/beyond-memorization/{_COMMIT}/data/{rel}", f"cxnli/{rel}", sha)
    for rel, sha in _SHA256.items()))

TEST_FILES = {"1": "CxNLI/CxNLI_3_examples_test.tsv", "2": "CxNLI_distinction/CxNLI_distinction_test.tsv"}
# Test files per experiment of the o1-preview subsets, as (id prefix, file). The release does
# not say how the 104- and 16-triple Exp 1 files were split between runs (6 triples are in
# both), so ``official-o1`` holds both (120 items) and the other two specs one each.
_O1_104 = ("o104-", "o1-preview/CxNLI_3_examples_test104.csv")
_O1_16 = ("o16-", "o1-preview/CxNLI_3_examples_test16.csv")
_O1_EXP2 = (("o10-", "o1-preview/CxNLI_distinction_test10.csv"),)
O1_TESTS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "official-o1": {"1": (_O1_104, _O1_16), "2": _O1_EXP2},
    "official-o1-104": {"1": (_O1_104,), "2": _O1_EXP2},
    "official-o1-16": {"1": (_O1_16,), "2": _O1_EXP2},
}
# In-context example files per experiment and setting (the authors' README: Exp 2 draws its
# CxNLI and SNLI examples from the Exp 1 files; the distinction folder's 1-example file has
# the same 24 triples as the Exp 1 one).
POOL_FILES = {
    "1": {"one-cxnli": "CxNLI/CxNLI_1_example_train.csv", "three-cxnli": "CxNLI/CxNLI_3_examples_train.csv",
          "one-snli": "CxNLI/SNLI_1_example_train.csv", "three-snli": "CxNLI/SNLI_3_examples_train.csv"},
    "2": {"one-cxnli": "CxNLI_distinction/CxNLI_1_example_train_CxNLI_distinction_train.csv",
          "three-cxnli": "CxNLI/CxNLI_3_examples_train.csv",
          "one-snli": "CxNLI/SNLI_1_example_train.csv", "three-snli": "CxNLI/SNLI_3_examples_train.csv"},
}
# The authors' README: both experiments draw their examples from the Exp 1 folder's files.
AUTHORS_POOL_FILES = POOL_FILES["1"]
# Validated and kept in extras, but no setting uses it: all 14 of its triples are also
# Exp 2 test items, so as in-context examples they would leak test answers.
DISTINCTION_TRAIN = "CxNLI_distinction/CxNLI_distinction_train.tsv"

EXPS = ("1", "2")
SETTINGS = ("zero", "one-cxnli", "three-cxnli", "one-snli", "three-snli")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _packaged(name: str) -> Path:
    return Path(str(files("lingdiag.suites.cxnli").joinpath(name)))


def _builtin_pools() -> tuple[dict[str, data.Pool], dict[str, str]]:  # setting → pool, file → sha
    cx_file, generic_file = _packaged("examples_slots.json"), _packaged("generic_examples.tsv")
    cx3 = data.to_pool(templates.generate(templates.read_slots(cx_file)))
    snli3 = data.to_pool(data.read_triples(generic_file))
    pools: dict[str, data.Pool] = {"one-cxnli": data.first_premise(cx3), "three-cxnli": cx3,
             "one-snli": data.first_premise(snli3), "three-snli": snli3}
    return pools, {str(cx_file): _sha(cx_file), str(generic_file): _sha(generic_file)}


def _flat(pool: data.Pool) -> tuple[data.Triple, ...]:
    return tuple(t for group in pool.values() for t in group)


def _extras(pools: dict[str, data.Pool], triples: Sequence[data.Triple], items: Sequence[Item]) -> dict[str, Any]:
    """Extras of a dataset whose in-context examples are the built-in ones."""
    ordered = {s: _flat(p) for s, p in pools.items()}
    return {"pools": {e: pools for e in EXPS}, "authors_pools": {e: ordered for e in EXPS},
            "raw": authors.raw_items(triples, items)}


def _builtin() -> Dataset:
    slots = _packaged("builtin_slots.json")
    triples = templates.generate(templates.read_slots(slots))
    items = data.to_items(triples, exp=None)
    pools, source = _builtin_pools()
    return Dataset("builtin", items, extras=_extras(pools, triples, items), source={str(slots): _sha(slots), **source})


def _locate(spec: str) -> Callable[[str], Path]:
    """Where the release's files are: fetched (``official*``) or under a directory."""
    if spec.startswith("official"):
        return lambda rel: official_path("cxnli", f"cxnli/{rel}")
    root = Path(spec)
    root = root if (root / "CxNLI").is_dir() else root / "cxnli"

    def where(rel: str) -> Path:
        path = root / rel
        if not path.exists():
            raise DatasetError(f"missing {rel} (expected the official layout CxNLI/, CxNLI_distinction/)", path=path)
        return path
    return where


def _release(spec: str) -> Dataset:
    """The official release (``official``, fetched), its o1-preview subsets (``official-o1*``)
    or a directory laid out like it.
    """
    where = _locate(spec)
    tests = O1_TESTS.get(spec, {e: (("", rel),) for e, rel in TEST_FILES.items()})
    cache: dict[str, list[data.Triple]] = {}
    source: dict[str, str] = {}

    def triples(rel: str) -> list[data.Triple]:
        if rel not in cache:
            path = where(rel)
            cache[rel] = data.read_triples(path)
            source[str(path)] = _SHA256[rel] if spec.startswith("official") else _sha(path)
        return cache[rel]

    items: list[Item] = []
    raw: dict[str, tuple[str, str, str]] = {}
    for e in EXPS:
        for prefix, rel in tests[e]:
            new = data.to_items(triples(rel), exp=e, prefix=prefix)
            items += new
            raw.update(authors.raw_items(triples(rel), new))
    pools = {e: {s: data.to_pool(triples(rel)) for s, rel in POOL_FILES[e].items()} for e in EXPS}
    ordered = {e: {s: tuple(triples(rel)) for s, rel in AUTHORS_POOL_FILES.items()} for e in EXPS}
    extras = {"pools": pools, "authors_pools": ordered, "raw": raw,
              "distinction_train": data.to_pool(triples(DISTINCTION_TRAIN))}
    return Dataset(spec, items, extras=extras, source=source)


def load(spec: str) -> Dataset:
    """``builtin``, ``official`` (fetched), the o1-preview subsets ``official-o1`` (both Exp 1
    files, 104 + 16 triples, and the 10 Exp 2 triples), ``official-o1-104`` or
    ``official-o1-16`` (fetched), a directory in the official layout, or one triples file
    (e.g. from ``lingdiag cxnli generate``; its items' experiment follows from their
    construction names, and the in-context examples are the built-in ones).
    """
    if spec == "builtin":
        return _builtin()
    path = Path(spec)
    if spec == "official" or spec in O1_TESTS or path.is_dir():
        return _release(spec)
    triples = data.read_triples(path)
    items = data.to_items(triples, exp=None)
    pools, source = _builtin_pools()
    return Dataset(spec, items, extras=_extras(pools, triples, items), source={str(path): _sha(path), **source})
