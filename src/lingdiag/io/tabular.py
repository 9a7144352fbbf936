"""Reading the data and answer files users hand to lingdiag, each kind in one place with one
error wording (file, line or row, what is wrong): text (:func:`read_text`), a JSON document
(:func:`read_json`), JSON lines (:func:`read_jsonl`) and CSV/TSV tables whose delimiter is read
from the header line (:func:`read_table`; published files named ``.csv`` are often
TAB-separated); and writing CSV/TSV files with every cell neutralised.

Spreadsheet formula injection (OWASP, "CSV Injection"): a cell that starts with ``=``, ``+``,
``-``, ``@``, TAB or CR is run as a formula by Excel, LibreOffice and Google Sheets. Cells
written from untrusted text (dataset text, model output, rater ids and comments) get a
leading ``'``, which spreadsheets show as text; NUL bytes, which end a cell early in some
readers, become U+FFFD. :func:`read_table` takes the quote off again, so a file lingdiag
writes reads back to the same text (a cell that already started with quotes before a
trigger gets one more, so the round trip is exact).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.io.atomic import atomic_text

FORMULA_START = "=+-@\t\r"
"""First characters that make a spreadsheet cell a formula (OWASP)."""
_QUOTED = re.compile(f"^'+[{re.escape(FORMULA_START)}]")
_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def decimal(text: str) -> float | None:
    """``text`` (spaces around it aside) as a finite number written in ASCII decimal, else None.

    Stricter than ``float()``, which also reads ``1_0`` as 10, full-width ``５`` as 5, and
    ``inf`` or ``nan``: in a file of ratings or scores those are typos or damage, not numbers.
    """
    text = text.strip()
    return float(text) if _DECIMAL.fullmatch(text) else None


def neutralise(cell: object) -> str:
    """``cell`` as text a spreadsheet shows as text: a ``'`` before a formula start, NUL as U+FFFD.

    Numbers (``-0.5``, ``+3``) pass as they are: a spreadsheet reads them as numbers, not formulas.
    """
    text = str(cell).replace("\0", "\ufffd")
    formula = text[:1] != "" and text[:1] in FORMULA_START and not _NUMBER.fullmatch(text)
    return "'" + text if formula or _QUOTED.match(text) else text


def restore(cell: str) -> str:
    """The text :func:`neutralise` was given (its one added quote taken off)."""
    return cell[1:] if _QUOTED.match(cell) else cell


def write_csv(path: Path, header: Sequence[object], rows: Iterable[Sequence[object]], *,
              delimiter: str = ",", lineterminator: str = "\r\n") -> int:
    """Write a CSV/TSV file atomically, every cell neutralised; the number of rows written.

    Raises:
        WriteError: ``path`` cannot be written.
    """
    n = 0
    with atomic_text(path, newline="") as fh:
        w = csv.writer(fh, delimiter=delimiter, lineterminator=lineterminator)
        w.writerow([neutralise(c) for c in header])
        for row in rows:
            w.writerow([neutralise(c) for c in row])
            n += 1
    return n


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark dropped); unreadable or empty is a ``DatasetError``."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as e:
        raise DatasetError(f"cannot read: {e.strerror}", path=path) from e
    except UnicodeDecodeError as e:
        raise DatasetError(f"not UTF-8 text ({e.reason} at byte {e.start})", path=path) from e
    if not text.strip():
        raise DatasetError("empty file", path=path)
    return text


def _invalid_json(path: Path, e: json.JSONDecodeError, line: int | None = None) -> DatasetError:
    return DatasetError(f"invalid JSON: {e.msg} (column {e.colno})", path=path,
                        line=e.lineno if line is None else line)


def read_json(path: Path) -> Any:
    """The JSON document in a file (UTF-8, a byte-order mark dropped).

    Raises:
        DatasetError: unreadable, empty or not JSON; the one line names the file and line.
    """
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise _invalid_json(path, e) from None


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSONL file with its line number, parsed.

    Lines end at a line feed only: JSON leaves U+2028, U+2029 and U+0085 unescaped inside strings
    (model answers hold them), and ``str.splitlines()`` would cut a record there.

    Raises:
        DatasetError: unreadable text or a line that is not JSON; the one line names the file and line.
    """
    for n, line in enumerate(read_text(path).split("\n"), 1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as e:
                raise _invalid_json(path, e, line=n) from None


def sniff_delimiter(header: str) -> str:
    """Tab if the header line has a tab, else comma."""
    return "\t" if "\t" in header else ","


def read_table(path: Path, delimiter: str | None = None, *,
               setting: str = "the delimiter to ';'") -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of a CSV/TSV file, names stripped, every value as text; ``delimiter``: the
    caller's hint (``;``), else read from the header line. A header read as one column holding
    ``;`` is refused before any row (a row's comma would otherwise split it), naming ``setting``,
    where the caller's user sets the delimiter (``items.delimiter``).

    A row with fewer cells than the header has the missing ones empty; one with more is an error.

    Raises:
        DatasetError: unreadable, or a row that is not CSV or has cells beyond the header; the
            one line names the file, the row (the header is row 1) and the extra cells.
    """
    text = read_text(path)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter or sniff_delimiter(text.split("\n", 1)[0]))
    done = 0  # lines of the rows read whole; a failed read has already counted lines of its own
    try:
        columns = [c.strip() for c in next(reader)]
        if delimiter is None and len(columns) == 1 and ";" in columns[0]:
            raise DatasetError(f"one column {columns[0][:60]!r}: the file looks ';'-separated; set {setting}",
                               path=path)
        rows, done = [], reader.line_num
        for cells in reader:
            done = reader.line_num
            if not cells:
                continue  # a blank line, as csv.DictReader skips it
            if len(cells) > len(columns):
                extra = ", ".join(repr(c) for c in cells[len(columns):])
                raise DatasetError(f"{len(cells)} cells but the header has {len(columns)} "
                                   f"(extra: {extra})", path=path, row=reader.line_num)
            cells += [""] * (len(columns) - len(cells))
            rows.append({k: restore(v) for k, v in zip(columns, cells, strict=True)})
    except csv.Error as e:  # e.g. a cell longer than csv.field_size_limit()
        raise DatasetError(f"not a readable CSV/TSV row: {e}", path=path, row=done + 1) from None
    return columns, rows
