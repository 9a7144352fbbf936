"""A suite file's items: rows of a CSV/TSV/JSON/JSONL file or a ``datasets`` dataset, mapped to
``Item``s by the file's column map (id, fields, tags, gold). Errors name the file, row and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lingdiag.analysis.languages import ALIGN
from lingdiag.errors import DatasetError, MissingDependency
from lingdiag.io.fetch import datasets_dir
from lingdiag.io.inline import PREFIX, held
from lingdiag.io.paths import sha256_file
from lingdiag.io.tabular import read_json, read_jsonl, read_table
from lingdiag.records import LANGUAGE, Item
from lingdiag.suitefile.schema import Items

HF = "hf:"
CACHE = "cache:"
_HF_SPEC = re.compile(r"^hf:(?P<name>[A-Za-z0-9][\w.-]*/[\w.-]+|\.{0,2}/[^:]*)(?::(?P<split>[\w.-]+))?$")
SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".parquet")


def check_spec(spec: str) -> str | None:
    """Why ``spec`` cannot name a data source, or None (paths are checked when read). A path
    without a suffix is a directory the ``datasets`` library reads.
    """
    if spec.startswith(HF) and not _HF_SPEC.match(spec):
        return f"{spec!r} is not hf:owner/name[:split] (or hf:./local/dir[:split])"
    suffix = Path(spec).suffix.lower()
    if not spec.startswith((HF, CACHE, PREFIX)) and suffix and suffix not in SUFFIXES:
        return (f"{spec!r}: a data file ends in {', '.join(SUFFIXES)}; a directory has no suffix "
                "(or use hf:owner/name[:split])")
    return None


def _json_rows(path: Path) -> Iterator[tuple[int, Any]]:
    if path.suffix.lower() == ".jsonl":
        yield from read_jsonl(path)
        return
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError("expected a JSON list of objects (one per item)", path=path)
    yield from enumerate(data, 1)


def _hf_rows(spec: str, base: Path) -> Iterator[tuple[int, Any]]:
    m = _HF_SPEC.match(spec)
    assert m is not None  # checked with the file
    name, split = m.group("name"), m.group("split") or "train"
    local = base / name if name.startswith(".") else None
    if local is not None and not local.is_dir():  # a typo, not a Hub name: fail now (before the import), naming it
        raise DatasetError("no such directory", path=local)
    try:
        import datasets
    except ModuleNotFoundError:
        raise MissingDependency(f"{spec}", "datasets", ["datasets"]) from None
    yield from _datasets_rows(datasets, local, name, split, spec)


def _datasets_rows(datasets: Any, local: Path | None, name: str, split: str, spec: str) -> Iterator[tuple[int, Any]]:
    try:
        if local is not None and (local / "dataset_info.json").exists():
            data = datasets.load_from_disk(str(local))  # a dataset written by save_to_disk
            if isinstance(data, datasets.DatasetDict):
                data = data[split]
        else:
            data = datasets.load_dataset(str(local) if local is not None else name, split=split)
    except (OSError, ValueError, KeyError) as e:
        raise DatasetError(f"cannot load with datasets: {str(e).splitlines()[0] if str(e) else e!r}",
                           path=spec) from None
    yield from enumerate(data, 1)


def _directory_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """A local ``datasets`` directory named without ``hf:`` (``save_to_disk``'s, or data files)."""
    try:
        import datasets
    except ModuleNotFoundError:
        raise MissingDependency(f"{path}", "datasets", ["datasets"]) from None
    yield from _datasets_rows(datasets, path, str(path), "train", str(path))


def _parquet_rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        import pyarrow.parquet as pq
    except ModuleNotFoundError:
        raise MissingDependency(f"{path}", "datasets", ["pyarrow"]) from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise DatasetError(f"not a readable parquet file: {str(e).splitlines()[0]}", path=path) from None
    yield from enumerate(table.to_pylist(), 1)


def resolve(spec: str, items: Items, base: Path) -> tuple[str, Path | None]:
    """The data source of ``--dataset spec``: a dataset the file names, or a path/``hf:`` spec given
    on the command line. Returns the spec to read and the local file (None for ``hf:``).
    """
    source = items.datasets[spec].path if spec in items.datasets else items.data if spec in ("builtin", "default") \
        else spec
    # The file's own paths are relative to it; one given on the command line is the user's.
    rel = base if spec in items.datasets or spec in ("builtin", "default") else Path.cwd()
    if source.startswith((HF, PREFIX)):
        return source, None
    if source.startswith(CACHE):
        root = datasets_dir().resolve()
        path = (root / source[len(CACHE):]).resolve()
        if not path.is_relative_to(root):  # cache:../../x or cache:/etc/x reads outside the datasets cache
            raise DatasetError(f"{source!r} leads outside the datasets cache {root}", path=source)
        return source, path
    return source, rel / source


def read_rows(spec: str, items: Items, base: Path) -> tuple[list[tuple[int, Any]], dict[str, str], str]:
    """The rows of dataset ``spec`` (row number, object), the sources read with their SHA-256, and
    where the rows came from (for errors).
    """
    source, path = resolve(spec, items, base)
    if source.startswith(PREFIX):
        given = held(source)
        if given is None:
            raise DatasetError("rows handed over in memory to another process; pass the DataFrame again",
                               path=source)
        return list(enumerate(given, 1)), {source: source.removeprefix(PREFIX)}, "DataFrame"
    if path is None:
        if problem := check_spec(source):
            raise DatasetError(problem)
        return list(_hf_rows(source, base)), {source: ""}, source
    declared = items.datasets.get(spec)
    if path.is_dir() and not path.suffix:
        return list(_directory_rows(path)), {str(path): ""}, str(path)
    if not path.is_file():
        hint = f"; run: lingdiag data fetch {declared.fetch}" if declared and declared.fetch else ""
        raise DatasetError(f"no such data file{hint}", path=path)
    sha = sha256_file(path)
    if declared and declared.sha256 and sha != declared.sha256:
        raise DatasetError(f"SHA-256 mismatch: expected {declared.sha256}, got {sha}", path=path)
    if path.suffix.lower() in (".csv", ".tsv"):
        _, table = read_table(path, items.delimiter, setting="items.delimiter: ';' in the suite file")
        rows: list[tuple[int, Any]] = list(enumerate(table, 2))  # row 1 is the header
    elif path.suffix.lower() in (".json", ".jsonl"):
        rows = list(_json_rows(path))
    elif path.suffix.lower() == ".parquet":
        rows = list(_parquet_rows(path))
    else:
        raise DatasetError(f"unknown data format {path.suffix!r}; use {', '.join(SUFFIXES)}", path=path)
    return rows, {str(path): sha}, str(path)


def _text(row: Mapping[str, Any], column: str, where: str, n: int) -> Any:
    if column not in row or row[column] is None or (isinstance(row[column], str) and not row[column].strip()):
        raise DatasetError("missing or empty", path=where, row=n, field=column)
    value = row[column]
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise DatasetError(f"expected text or a number, found {type(value).__name__}", path=where, row=n,
                           field=column)
    return value


def to_items(rows: Sequence[tuple[int, Any]], items: Items, where: str, labels: Sequence[str]) -> list[Item]:
    """``Item``s of ``rows`` by the column map; ids unique, gold among ``labels`` when they are closed."""
    out, seen = [], set()
    for n, row in rows:
        if not isinstance(row, Mapping):
            raise DatasetError(f"expected an object with columns, found {type(row).__name__}", path=where, row=n)
        item_id = str(_text(row, items.id, where, n))
        if item_id in seen:
            raise DatasetError(f"duplicate id {item_id!r}", path=where, row=n, field=items.id)
        seen.add(item_id)
        fields = {f: _text(row, f, where, n) for f in items.fields}
        tags = {}
        for tag, spec in items.tags.items():
            value = str(_text(row, spec.column, where, n))
            if spec.map is not None:
                if value not in spec.map:
                    raise DatasetError(f"{value!r} is not in the map of tag {tag!r} ({', '.join(spec.map)})",
                                       path=where, row=n, field=spec.column)
                value = spec.map[value]
            tags[tag] = value
        gold = None
        if items.gold is not None:
            gold = str(_text(row, items.gold, where, n))
            if labels and gold not in labels:
                raise DatasetError(f"gold {gold!r} is not a label ({', '.join(labels)})", path=where, row=n,
                                   field=items.gold)
        out.append(Item(item_id, fields, gold, tags))
    _one_per_align(out, [n for n, _ in rows], items, where)
    return out


def _one_per_align(items: Sequence[Item], rows: Sequence[int], spec: Items, where: str) -> None:
    """Aligned translations pair one item per language and ``align`` id: a second one would be
    silently dropped by the paired comparison, so it is refused naming both items and the id.
    """
    if ALIGN not in spec.tags:
        return
    first: dict[tuple[str | None, str], str] = {}
    for n, it in zip(rows, items, strict=True):
        key = (it.tags.get(LANGUAGE), it.tags[ALIGN])
        if key in first:
            lang = f" of language {key[0]!r}" if key[0] is not None else ""
            raise DatasetError(f"items {first[key]!r} and {it.id!r}{lang} share align id {key[1]!r} (one item per "
                               "language and align id)", path=where, row=n, field=spec.tags[ALIGN].column)
        first[key] = it.id
