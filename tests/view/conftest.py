"""What the viewer's browser tests share: ``lingdiag view`` over a module's ``root`` as a real process,
and one headless Chromium per module (each module builds its own ``root`` and its own ``page``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import SRC, chromium_path


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    """The URL of ``lingdiag view ROOT`` on a free port, stopped after the module."""
    with open(root / "view.log", "w") as log, subprocess.Popen(
            [sys.executable, "-m", "lingdiag", "view", str(root), "--port", "0"], cwd=root, stdout=subprocess.PIPE,
            stderr=log, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC}) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            assert line.startswith("lingdiag view: http://127.0.0.1:"), line + (root / "view.log").read_text()
            yield line.split()[2]
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield chromium
        chromium.close()
