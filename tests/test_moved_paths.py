"""The old import paths of the analysis and reader modules still work for one release, as the
very same module objects, with a DeprecationWarning naming the new path."""

from __future__ import annotations

import importlib
import sys

import pytest

MOVED = {"compare": "analysis", "mixed": "analysis", "competence": "analysis", "frames": "analysis",
         "tabular": "io", "importing": "io", "fetch": "io", "itemcounts": "io"}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_old_path_is_the_new_module_and_warns(name: str) -> None:
    new = importlib.import_module(f"lingdiag.{MOVED[name]}.{name}")
    sys.modules.pop(f"lingdiag.{name}", None)
    with pytest.warns(DeprecationWarning, match=f"lingdiag.{name} moved to lingdiag.{MOVED[name]}.{name}"):
        old = importlib.import_module(f"lingdiag.{name}")
    assert old is new


def test_load_stays_at_the_package_root() -> None:
    import lingdiag
    from lingdiag.analysis.frames import load

    assert lingdiag.load is load
