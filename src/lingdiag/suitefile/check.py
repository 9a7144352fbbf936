"""``lingdiag suite check``: a suite file read, its data loaded and every prompt rendered on every
item, so that whatever would stop a run stops here, as one line naming the file and key path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.suite import Suite


@dataclass(frozen=True)
class CheckReport:
    """What a valid suite file holds."""

    suite: Suite
    dataset: str
    n_items: int
    conditions: tuple[str, ...]
    requests: int


def check(path: Path, dataset: str | None = None) -> CheckReport:
    """Check ``path`` and its dataset ``dataset`` (None: the file's default, ``builtin``) in full.

    Raises:
        ConfigError: the file is broken (one line: file, key path, expectation).
        DatasetError: its data is (one line: data file, row, column).
    """
    from lingdiag.suitefile import load_compiled

    compiled, suite = load_compiled(path)
    dataset = dataset or suite.default_dataset
    data = suite.load(dataset).require_items()
    compiled.check_groups(data.items)
    compiled.problems.raise_any()
    conditions = suite.conditions(data, {a.name: list(a.values) for a in suite.axes}, suite.parse_options({}), 0)
    requests = 0
    for c in conditions:
        where = "conditions: " + ", ".join(f"{a}={v}" for a, v in c.axes.items())
        for item in c.items:
            try:
                requests += len(c.strategy.render(item))
            except ConfigError as e:
                raise ConfigError(f"{path}: {where}: {e}") from None
    return CheckReport(suite, dataset, len(data.items), tuple(c.name for c in conditions), requests)
