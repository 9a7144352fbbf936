"""Reading the data and answer files users hand to lingdiag: text with one-line errors, and
CSV/TSV tables whose delimiter is read from the header line (published files named ``.csv``
are often TAB-separated).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from lingdiag.errors import DatasetError


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


def sniff_delimiter(header: str) -> str:
    """Tab if the header line has a tab, else comma."""
    return "\t" if "\t" in header else ","


def read_table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of a CSV/TSV file, names stripped, every value as text."""
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text), delimiter=sniff_delimiter(text.splitlines()[0]))
    try:
        columns = [c.strip() for c in reader.fieldnames or []]
        rows = [{(k or "").strip(): (v or "") for k, v in row.items()} for row in reader]
    except csv.Error as e:  # e.g. a cell longer than csv.field_size_limit()
        raise DatasetError(f"not a readable CSV/TSV row: {e}", path=path, row=reader.line_num + 1) from None
    return columns, rows
