"""What reading costs as an answer grows: seconds to read answers of 2,000, 8,000 and 32,000 label
mentions in the shapes an answer may repeat them in (one clause, sentences, lines, reasons, revisions).

``python bench/reader_linear.py`` prints the best of three readings per size; a linear reader
takes about 4 times as long for 4 times the mentions. Nothing is asserted (``tests/parse/test_linear.py``
asserts the growth by counting calls).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from lingdiag.parse.labels import language, parse_label

LABELS = ["True", "False", "Unknown"]
SHAPES: dict[str, Callable[[int], str]] = {
    "one clause": lambda n: "True " * n,
    "sentences": lambda n: "True. " * n,
    "lines": lambda n: "True\n" * n,
    "reasons": lambda n: "The answer is True because it is not False. " * (n // 2),
    "revisions": lambda n: "True. Actually, False. " * (n // 2),
}


def seconds(text: str) -> float:
    """The best of three readings of ``text``."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        parse_label(text, LABELS, lang=language("en"))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    """Print the table."""
    parse_label("True", LABELS, lang=language("en"))  # the patterns are compiled once
    sizes = (2000, 8000, 32000)
    print("| shape | " + " | ".join(f"{n:,} mentions (s)" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, make in SHAPES.items():
        print(f"| {name} | " + " | ".join(f"{seconds(make(n)):.2f}" for n in sizes) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
