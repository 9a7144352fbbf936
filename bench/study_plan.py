"""What a study costs above its runs.

1. Planning: a study of 50 runs (25 models × 2 suite files, nothing loaded) is planned and every
   run's data read and checked; prints the seconds.
2. A study of N runs against the same N runs as single ``lingdiag.engine.run.run`` calls, each loading
   its model as ``lingdiag run`` does, every side in a fresh response cache; prints both wall
   times and their ratio (study / singles; below 1: the study is cheaper, since a model is
   loaded once for all of its suites).

    python bench/study_plan.py [--models smollm2-135m,...] [--limit 8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from lingdiag.engine.run import run
from lingdiag.io.paths import cache_dir
from lingdiag.study.execute import check_plan, run_study
from lingdiag.study.plan import plan_study
from lingdiag.study.schema import StudyFile

SUITES = Path(__file__).resolve().parents[1] / "examples" / "suites"
FILES = ["agreement-pairs.yaml", "telicity-adverbials.yaml"]


def _study(models: list[str], limit: int, base: Path) -> StudyFile:
    return StudyFile.model_validate({"models": [{"spec": m} for m in models], "limit": limit, "base": base,
                                     "suites": [{"suite": str(SUITES / f)} for f in FILES]})


def planning(base: Path) -> float:
    started = time.perf_counter()
    runs = plan_study(_study([f"hf:org/model-{k}" for k in range(25)], 8, base))
    check_plan(runs)
    assert len(runs) == 50
    return time.perf_counter() - started


def _fresh_cache(path: Path, models: Path) -> None:
    """An empty response cache at ``path``, sharing the converted embedded models (not timed here)."""
    path.mkdir(parents=True)
    if models.is_dir():
        (path / "models").symlink_to(models)
    os.environ["LINGDIAG_CACHE"] = str(path)


def study_vs_singles(models: list[str], limit: int, base: Path) -> tuple[float, float, int]:
    converted = cache_dir() / "models"
    _fresh_cache(base / "cache-study", converted)
    started = time.perf_counter()
    state = run_study(_study(models, limit, base), base / "study")
    study = time.perf_counter() - started
    _fresh_cache(base / "cache-singles", converted)
    started = time.perf_counter()
    for k, entry in enumerate(plan_study(_study(models, limit, base))):
        run(entry.config, base / "singles" / str(k))
    return study, time.perf_counter() - started, len(state.runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="smollm2-135m")
    parser.add_argument("--limit", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"plan: 50 runs planned and checked in {planning(Path(tmp)):.2f} s")
        study, singles, n = study_vs_singles(args.models.split(","), args.limit, Path(tmp))
        print(f"study: {n} runs in {study:.1f} s; the same {n} single runs in {singles:.1f} s; "
              f"ratio {study / singles:.2f}")


if __name__ == "__main__":
    main()
