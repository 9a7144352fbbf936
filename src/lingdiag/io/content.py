"""The content identity of an input file: the SHA-256 of what a reader takes from it, not of its bytes.

A run records, for each file it read (the data, the suite file), this identity, and a run is current
while the identity is unchanged (``lingdiag.rundir.inputs``). So a comment added to a YAML suite file,
a blank line added to a CSV or JSONL, a JSON or YAML document laid out again (keys reordered, indented
otherwise), a file re-saved with other line endings or a byte-order mark change nothing; an edited row,
an added or removed row, or a file added to a dataset folder does. The read form, by suffix:

- ``.csv`` / ``.tsv``: the rows (``csv`` with ``,`` or a tab), blank rows left out;
- ``.jsonl``: each non-blank line, without surrounding blanks;
- ``.json`` / ``.yaml`` / ``.yml``: the parsed document (YAML without aliases, as every lingdiag reader);
- a folder: each regular, non-hidden file under it by its path in the folder and its identity, so a
  file added, removed or renamed is seen;
- anything else, or a file of those suffixes that does not parse: its bytes.

An identity is ``content:`` and 64 hex digits; a bare 64-hex value is the SHA-256 of the bytes, as
runs written before this identity existed record it (and compare it still).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from lingdiag.errors import RunError
from lingdiag.io.limits import RUN_FILE_BYTES, read_regular

PREFIX = "content:"
"""What starts a content identity (a byte SHA-256 has no prefix)."""
_MEMO: dict[tuple[str, int, int, int, int, int], str] = {}
"""Identities of files by (path, device, inode, size, mtime, ctime): many runs of one study read one data
file. The change time is the kernel's (``cp -p`` and ``tar x`` restore a modification time, never it),
so a file replaced by another of the same size and modification time is read again."""


def is_content(value: str) -> bool:
    """Whether ``value`` is a content identity (not a byte SHA-256, a name or empty)."""
    return value.startswith(PREFIX)


def content_id(path: Path) -> str | None:
    """The content identity of the file or folder at ``path`` (see the module's text); None if it is
    not there (or is neither a regular file nor a folder, or cannot be read).
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return _folder(Path(path))
    if not stat.S_ISREG(info.st_mode):
        return None
    key = (str(Path(path).resolve()), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if key not in _MEMO:
        try:
            data = read_regular(Path(path), RUN_FILE_BYTES)
        except RunError:
            return None
        _MEMO[key] = text_id(data, Path(path).suffix)
    return _MEMO[key]


def text_id(data: bytes, suffix: str) -> str:
    """The content identity of a file's ``data``, read as a file with ``suffix`` is read."""
    read = _READ.get(suffix.lower())
    digest = hashlib.sha256(f"{suffix.lower()}\0".encode())
    if read is not None:
        try:
            digest.update("".join(read(data.decode("utf-8-sig").replace("\r\n", "\n"))).encode())
            return PREFIX + digest.hexdigest()
        except (ValueError, yaml.YAMLError, csv.Error, RecursionError):
            pass  # not of its suffix's format: its bytes are what a reader would refuse or take
    return PREFIX + hashlib.sha256(b"bytes\0" + data).hexdigest()


def _folder(folder: Path) -> str | None:
    """A folder's identity: its regular non-hidden files, by path in the folder, with their identities."""
    entries = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(root) / name
            if not path.is_file():
                continue
            ident = content_id(path)
            if ident is not None:
                entries.append(f"{path.relative_to(folder).as_posix()}\0{ident}")
    return PREFIX + hashlib.sha256(("folder\0" + "\n".join(entries)).encode("utf-8", "surrogatepass")).hexdigest()


def _rows(delimiter: str) -> Callable[[str], Iterator[str]]:
    def read(text: str) -> Iterator[str]:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            if row:  # a blank line is no row
                yield "\x1f".join(row) + "\x1e"
    return read


def _lines(text: str) -> Iterator[str]:
    """Each non-blank line without its surrounding blanks (a JSONL file's records are lines; parsing 18 MB of
    them to compare took 50 times hashing it).
    """
    for line in text.split("\n"):
        if line.strip():
            yield line.strip() + "\n"


def _document(parse: Callable[[str], Any]) -> Callable[[str], Iterator[str]]:
    """A whole parsed document, as canonical JSON (so layout, comments and key order are not content)."""
    def read(text: str) -> Iterator[str]:
        form = parse(text)
        if form is None:
            raise ValueError("empty document")
        yield json.dumps(form, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return read


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing aliases: a few lines of nested aliases expand to billions of nodes."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if isinstance(self.peek_event(), yaml.AliasEvent):  # type: ignore[no-untyped-call]
            raise ValueError("YAML alias")
        return super().compose_node(parent, index)


def _yaml(text: str) -> Any:
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


_READ = {".csv": _rows(","), ".tsv": _rows("\t"), ".jsonl": _lines, ".json": _document(json.loads),
         ".yaml": _document(_yaml), ".yml": _document(_yaml)}
"""Suffix → the read form of a file's text."""
