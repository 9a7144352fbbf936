"""Name → factory registries, one per kind of plug-in.

Adding a backend, suite or strategy is one new module that calls ``register``; nothing in
the engine changes. Third-party packages can register through the ``lingdiag.plugins``
entry-point group: each entry point names a module that is imported once, on first lookup.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from lingdiag.errors import UnknownNameError

T = TypeVar("T")

# Modules that register the built-in plug-ins; imported lazily so that `import lingdiag`
# stays light and optional heavy dependencies load only when their backend is chosen.
_BUILTIN_MODULES = (
    "lingdiag.models.providers",
    "lingdiag.suites.imperfective",
    "lingdiag.suites.explica",
    "lingdiag.suites.cxnli",
    "lingdiag.suites.minimal_pairs",
    "lingdiag.suites.syntaxgym",
    "lingdiag.suites.harness",
    "lingdiag.suitefile",
    "lingdiag.conditions.registry",
)
_HOMES: dict[str, dict[str, str]] = {
    "meta.json part": {"thinking": "lingdiag.conditions.thinking",
                       "after_thinking": "lingdiag.conditions.after_thinking",
                       "scoring_policies": "lingdiag.conditions.scoring_policy",
                       "precision": "lingdiag.conditions.precision",
                       "temperature": "lingdiag.conditions.temperature",
                       "judge_gate": "lingdiag.engine.judge"},
}
"""Registry kind → name → the built-in module that registers it, imported alone when the name is first
asked for: reading a run that holds an axis's ``meta.json`` part imports that axis's module, not every
suite and provider (``load_plugins``). A third party's plug-ins are found through their entry points."""
_loaded = False


_IMPORTED: set[str] = set()


def import_package(package: str) -> None:
    """Import every module of ``package`` once: where each module registers one entry (a report's or a study
    report's section), adding an entry is adding its file.
    """
    if package not in _IMPORTED:
        _IMPORTED.add(package)
        for info in pkgutil.iter_modules(import_module(package).__path__):
            import_module(f"{package}.{info.name}")


def load_plugins() -> None:
    """Import the built-in plug-in modules and any ``lingdiag.plugins`` entry points."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in _BUILTIN_MODULES:
        try:
            import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # the module exists but one of its imports is missing
                raise
    for ep in entry_points(group="lingdiag.plugins"):
        ep.load()


class Registry(Generic[T]):
    """A plain dict of name → factory with a helpful error on a miss."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, T] = {}
        self._resolvers: list[Callable[[str], T | None]] = []
        self._homes = _HOMES.get(kind, {})

    def add_resolver(self, resolve: Callable[[str], T | None]) -> None:
        """Also answer names no factory is registered under: ``resolve(name)`` returns the
        factory, or None where the name is not its kind (a suite file's path, say).
        """
        self._resolvers.append(resolve)

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering ``factory`` under ``name``."""

        def add(factory: T) -> T:
            self._factories[name] = factory
            return factory

        return add

    def find(self, name: str) -> T | None:
        """``name``'s factory, or None: a name with a built-in home module is found by importing that module
        alone; any other after every plug-in is loaded (``load_plugins``), else by a resolver.
        """
        if name in self._homes:
            import_module(self._homes[name])
        else:
            load_plugins()
        if name in self._factories:
            return self._factories[name]
        for resolve in self._resolvers:
            found = resolve(name)
            if found is not None:
                return found
        return None

    def get(self, name: str) -> T:
        """Look up ``name``; raises ``UnknownNameError`` listing valid names."""
        found = self.find(name)
        if found is None:
            raise UnknownNameError(self.kind, name, self.names())
        return found

    def names(self) -> list[str]:
        """All registered names, sorted."""
        load_plugins()
        return sorted({*self._factories, *self._homes})
