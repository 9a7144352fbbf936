"""Frequency bins and the balance of classes across them (ExpliCa §3.3, App. C, Table 3).

A frequency file gives one corpus frequency per (item, variant) row: ExpliCa's
explica_freq_4800.tsv counts the triplet {first verb, connective, second verb} in enTenTen21
for each ordered pair and connective. Rows are binned at the quartiles of their frequencies,
RARE below Q1, UNCOMMON in [Q1, Q2), COMMON in [Q2, Q3) and FREQUENT from Q3 up, quartiles
interpolated linearly (numpy's and pandas' default). That is the rule behind the paper's bin
ranges: Table 3 reads Rare (0-4), Uncommon (5-56.4), Common (56.5-498), Frequent (499-7M), and
the quartiles of the published file's ``frequency`` column are 5, 56.5 and 499; with it every
row's published ``freq_cat`` is recomputed (tests/audit/test_frequency.py). An item's own
frequency is the sum over its rows, binned the same way among items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lingdiag.errors import DatasetError
from lingdiag.figures import Figure, pyplot, to_png
from lingdiag.io.tabular import read_table

BINS = ("Rare", "Uncommon", "Common", "Frequent")
_PUBLISHED = {"1_rare": "Rare", "2_uncommon": "Uncommon", "3_common": "Common", "4_frequent": "Frequent"}
# Column names accepted for each role, the official file's first.
ALIASES = {
    "first": ("Sentence_A", "first", "premise"),
    "second": ("Sentence_B", "second", "hypothesis"),
    "variant": ("tested_connective", "variant", "connective"),
    "frequency": ("frequency", "count", "freq"),
    "bin": ("freq_cat", "bin", "frequency_bin"),
}


@dataclass(frozen=True, slots=True)
class FrequencyRow:
    """One row of a frequency file."""

    first: str
    second: str
    variant: str
    """Empty where the file has no variant column (one row per item)."""
    frequency: float
    published_bin: str | None


@dataclass(frozen=True, slots=True)
class BalanceTest:
    """Chi-square test of independence between class and bin."""

    chi2: float
    dof: int
    p: float
    cramers_v: float
    verdict: str


@dataclass(frozen=True, slots=True)
class FrequencyAudit:
    """Class counts per frequency bin, per (item, variant) row and per item."""

    source: str
    quartiles: tuple[float, float, float]
    rows: Mapping[str, Mapping[str, int]]
    """bin → class → rows (Table 3 of ExpliCa)."""
    items: Mapping[str, Mapping[str, int]]
    """bin → class → items, binned by the sum of their rows' frequencies."""
    item_quartiles: tuple[float, float, float]
    rows_test: BalanceTest
    n_rows: int
    unmatched_rows: int
    """File rows matching no item (left out)."""
    items_without_rows: int
    published_agreement: tuple[int, int] | None
    """(rows whose recomputed bin equals the file's own bin column, rows with such a column)."""


def _column(columns: Sequence[str], role: str) -> str | None:
    return next((name for name in ALIASES[role] if name in columns), None)


def _required(columns: Sequence[str], role: str, path: Path) -> str:
    found = _column(columns, role)
    if found is None:
        raise DatasetError(f"missing column (one of: {', '.join(ALIASES[role])})", path=path, field=role)
    return found


def read_frequencies(path: Path) -> list[FrequencyRow]:
    """The rows of a frequency file (comma- or tab-separated)."""
    columns, rows = read_table(path)
    first, second = _required(columns, "first", path), _required(columns, "second", path)
    freq = _required(columns, "frequency", path)
    variant, published = _column(columns, "variant"), _column(columns, "bin")
    out: list[FrequencyRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for n, row in enumerate(rows, 2):
        key = (row[first].strip(), row[second].strip(), row[variant].strip() if variant else "")
        if key in seen:  # a row counted twice would shift the quartiles and the class counts
            raise DatasetError(f"the same item and variant are on row {seen[key]}", path=path, row=n, field=first)
        seen[key] = n
        text = row[freq].strip()
        try:
            value = float(text)
        except ValueError:
            raise DatasetError(f"expected a number, found {text!r}", path=path, row=n, field=freq) from None
        if value < 0 or not np.isfinite(value):
            raise DatasetError(f"a frequency must be finite and not negative, found {text!r}", path=path, row=n,
                               field=freq)
        pub = row[published].strip() if published else ""
        out.append(FrequencyRow(*key, value, _PUBLISHED.get(pub, pub) or None))
    if not out:
        raise DatasetError("no rows", path=path)
    return out


def quartile_bins(values: Sequence[float]) -> tuple[tuple[float, float, float], list[str]]:
    """The quartiles of ``values`` and each value's bin (see the module docstring)."""
    q1, q2, q3 = (float(q) for q in np.quantile(np.asarray(values, dtype=float), [0.25, 0.5, 0.75]))
    edges = np.asarray([q1, q2, q3])
    # side="right": a value equal to a quartile belongs to the bin that starts there.
    return (q1, q2, q3), [BINS[int(i)] for i in np.searchsorted(edges, values, side="right")]


def _table(bins: Sequence[str], labels: Sequence[str], classes: Sequence[str]) -> dict[str, dict[str, int]]:
    table = {b: dict.fromkeys(classes, 0) for b in BINS}
    for b, c in zip(bins, labels, strict=True):
        table[b][c] += 1
    return table


def balance_test(table: Mapping[str, Mapping[str, int]]) -> BalanceTest:
    """Chi-square test of independence of class and bin; verdict at p < .05."""
    from scipy.stats import chi2_contingency

    m = np.asarray([[table[b][c] for c in next(iter(table.values()))] for b in table], dtype=float)
    m = m[m.sum(axis=1) > 0][:, m.sum(axis=0) > 0]
    if min(m.shape) < 2:
        return BalanceTest(0.0, 0, 1.0, 0.0, "not testable (one class or one bin)")
    chi2, p, dof, _ = chi2_contingency(m)
    v = float(np.sqrt(chi2 / (m.sum() * (min(m.shape) - 1))))
    verdict = "classes differ across bins" if p < 0.05 else "no significant difference across bins"
    return BalanceTest(float(chi2), int(dof), float(p), v, verdict)


def frequency_audit(keys: Sequence[tuple[str, str]], labels: Sequence[str], path: Path) -> FrequencyAudit:
    """Bin the rows of frequency file ``path`` and count classes per bin.

    Args:
        keys: Each item's (first half, second half) texts, matched against the file.
        labels: Each item's class.
        path: The frequency file.

    Returns:
        The class counts per bin, per row and per item.
    """
    rows = read_frequencies(path)
    index = {k: i for i, k in enumerate(keys)}
    matched = [(index[(r.first, r.second)], r) for r in rows if (r.first, r.second) in index]
    if not matched:
        raise DatasetError("no row matches an item of the dataset (by its two sentences)", path=path)
    classes = sorted(set(labels))
    quartiles, bins = quartile_bins([r.frequency for _, r in matched])
    per_item: dict[int, float] = {}
    for i, r in matched:
        per_item[i] = per_item.get(i, 0.0) + r.frequency
    item_ids = sorted(per_item)
    item_q, item_bins = quartile_bins([per_item[i] for i in item_ids])
    published = [(b, r.published_bin) for b, (_, r) in zip(bins, matched, strict=True) if r.published_bin]
    rows_table = _table(bins, [labels[i] for i, _ in matched], classes)
    return FrequencyAudit(
        source=str(path), quartiles=quartiles, rows=rows_table,
        items=_table(item_bins, [labels[i] for i in item_ids], classes), item_quartiles=item_q,
        rows_test=balance_test(rows_table), n_rows=len(matched), unmatched_rows=len(rows) - len(matched),
        items_without_rows=len(keys) - len(per_item),
        published_agreement=(sum(a == b for a, b in published), len(published)) if published else None)


def balance_figure(audit: FrequencyAudit) -> Figure:
    """Class counts per frequency bin as grouped bars, rows of the frequency file (ExpliCa Fig. 2)."""
    plt = pyplot()
    classes = list(next(iter(audit.rows.values())))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(classes)
    for j, c in enumerate(classes):
        ax.bar([i + j * width for i in range(len(BINS))], [audit.rows[b][c] for b in BINS], width, label=c)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(BINS))], BINS)
    ax.set_ylabel("rows")
    ax.grid(axis="y", linestyle="--", alpha=0.6)
    ax.legend(ncols=3, fontsize="small")
    q = ", ".join(f"{x:g}" for x in audit.quartiles)
    return Figure("Rows per frequency bin and class", to_png(fig), f"bins at the quartiles {q} of {audit.source}")
