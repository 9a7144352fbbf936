"""CI=true turns a skip for a missing install into a failure that names it; absent environments still skip."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, body: str, ci: str) -> subprocess.CompletedProcess[str]:
    # A tiny project that uses the repository's conftest, so the hooks under test are the real ones.
    (tmp_path / "tests").mkdir()
    for name in ("conftest.py", "helpers.py", "fast_lane.py"):  # the conftest imports the helpers and the weights check
        shutil.copy(REPO / "tests" / name, tmp_path / "tests" / name)
    (tmp_path / "tests" / "test_tiny.py").write_text(body)
    env = {**os.environ, "CI": ci}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


MISSING_EXTRA = '''
import pytest

def test_needs_an_extra():
    pytest.importorskip("lingdiag_uninstalled_extra_xyz", reason="lingdiag_uninstalled_extra_xyz is not installed")

def test_passes():
    assert True
'''

ABSENT_ENVIRONMENT = '''
import pytest

def test_needs_slurm():
    pytest.skip("no SLURM here (sbatch absent): apt-get install slurm-wlm munge")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False
'''


@pytest.mark.slow
def test_ci_run_with_an_uninstalled_extra_fails_and_names_it(tmp_path: Path) -> None:
    run = _pytest(tmp_path, MISSING_EXTRA, ci="true")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "lingdiag_uninstalled_extra_xyz" in out and "SKIPPED IN CI" in out
    assert "test_needs_an_extra" in out


@pytest.mark.slow
def test_outside_ci_the_same_skip_passes(tmp_path: Path) -> None:
    run = _pytest(tmp_path, MISSING_EXTRA, ci="")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SKIPPED IN CI" not in run.stdout


@pytest.mark.slow
def test_ci_allows_an_absent_environment_and_lists_it_by_name(tmp_path: Path) -> None:
    run = _pytest(tmp_path, ABSENT_ENVIRONMENT, ci="true")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "environments absent here" in out and "no SLURM (sbatch absent): 1 test(s) skipped" in out
