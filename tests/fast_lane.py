"""The fast lane loads no model weights: a test not marked ``slow`` that loads a transformers model
(``PreTrainedModel.from_pretrained``, which every ``AutoModel*`` load goes through) or a llama.cpp
model (``llama_cpp.Llama``) fails, naming the model, even where the code under test swallows the
error the load raises.

Nothing is patched away: both entry points are wrapped when their modules are first imported (an
import hook, so a session that never imports transformers never pays for it), and the wrappers call
the real thing whenever the running test is marked ``slow`` or no test is running. The hooks below
are re-exported by ``conftest.py``.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Generator, Sequence
from types import ModuleType
from typing import Any

import pytest

_running: list[str] = []
"""The node id of the running test while it is not marked slow (set for setup, call and teardown)."""
_loaded: dict[str, list[str]] = {}
"""Node id → the models a fast test loaded."""


class WeightsInFastLane(Exception):  # noqa: N818  (named for what it says, as pytest's own Failed)
    """A test not marked slow loaded model weights."""


def _guard(what: str, load: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(load)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _running:
            name = f"{what}({', '.join(map(repr, args[1:2])) or kwargs.get('model_path', '')})"
            _loaded.setdefault(_running[-1], []).append(name)
            raise WeightsInFastLane(f"{name} in a test not marked slow: mark it @pytest.mark.slow or make it "
                                    "model-free (the fast lane, pytest -m 'not slow', loads no weights)")
        return load(*args, **kwargs)

    return guarded


def _wrap_transformers(module: ModuleType) -> None:
    cls = module.PreTrainedModel
    cls.from_pretrained = classmethod(_guard("from_pretrained", cls.from_pretrained.__func__))


def _wrap_llama_cpp(module: ModuleType) -> None:
    module.Llama.__init__ = _guard("llama_cpp.Llama", module.Llama.__init__)


_WRAPS: dict[str, Callable[[ModuleType], None]] = {
    "transformers.modeling_utils": _wrap_transformers,
    "llama_cpp.llama": _wrap_llama_cpp,
}


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the entry points above right after their module executes."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name not in _WRAPS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, _WRAPS[name])
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any, wrap: Callable[[ModuleType], None]) -> None:
        self.inner, self.wrap = inner, wrap

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.inner.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.wrap(module)


def pytest_configure(config: pytest.Config) -> None:
    """Install the import hook (or wrap at once what an earlier import already loaded)."""
    for name, wrap in _WRAPS.items():
        if name in sys.modules:
            wrap(sys.modules[name])
    sys.meta_path.insert(0, _Finder())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Weights are forbidden from the test's setup to its teardown unless it is marked slow."""
    fast = item.get_closest_marker("slow") is None
    if fast:
        _running.append(item.nodeid)
    try:
        return (yield)
    finally:
        if fast:
            _running.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A fast test that loaded weights fails at teardown, whatever became of the error its load raised."""
    report: pytest.TestReport = yield
    loaded = _loaded.pop(item.nodeid, None) if call.when == "teardown" else None
    if loaded:
        report.outcome = "failed"
        report.longrepr = f"loaded model weights in the fast lane: {', '.join(loaded)}"
    return report
