"""Reading the data and answer files users hand to lingdiag: text with one-line errors, and
CSV/TSV tables whose delimiter is read from the header line (published files named ``.csv``
are often TAB-separated); and writing CSV/TSV files with every cell neutralised.

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


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSONL file with its line number, parsed; unreadable text or a
    line that is not JSON is a one-line ``DatasetError`` naming the file and line.
    """
    for n, line in enumerate(read_text(path).split("\n"), 1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as e:
                raise DatasetError(f"invalid JSON: {e.msg}", path=path, row=n) from None


def sniff_delimiter(header: str) -> str:
    """Tab if the header line has a tab, else comma."""
    return "\t" if "\t" in header else ","


def read_table(path: Path, delimiter: str | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of a CSV/TSV file, names stripped, every value as text; ``delimiter``: the
    caller's hint (``;``), else read from the header line.
    """
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter or sniff_delimiter(text.splitlines()[0]))
    try:
        columns = [c.strip() for c in reader.fieldnames or []]
        rows = [{(k or "").strip(): restore(v or "") for k, v in row.items()} for row in reader]
    except csv.Error as e:  # e.g. a cell longer than csv.field_size_limit()
        raise DatasetError(f"not a readable CSV/TSV row: {e}", path=path, row=reader.line_num + 1) from None
    return columns, rows
