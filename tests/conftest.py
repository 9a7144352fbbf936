"""Shared fixtures: the shared datasets folder, a private cache, and the embedded model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """``../shared/datasets`` (official files); tests using it skip where it is absent."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"official datasets not available at {SHARED_DATASETS}")
    return SHARED_DATASETS


USER_MODELS = Path(os.environ.get("LINGDIAG_CACHE") or Path.home() / ".cache" / "lingdiag") / "models"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own cache for datasets and responses, but converted models are
    shared with the user cache (converting takes ~20 s per model)."""
    base = tmp_path / "lingdiag-cache"
    base.mkdir()
    USER_MODELS.mkdir(parents=True, exist_ok=True)
    (base / "models").symlink_to(USER_MODELS)
    monkeypatch.setenv("LINGDIAG_CACHE", str(base))


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The embedded SmolLM2-135M-Instruct on the transformers backend, loaded once."""
    from lingdiag.models.providers import load_backend

    yield load_backend("smollm2-135m")
