"""lingdiag: controlled linguistic diagnostic evaluations of language models.

The public names below are imported from their modules when first used (PEP 562), not when a
submodule is: reading a run directory (``lingdiag.rundir``) must not import the orchestrator, the
analyses or every axis (``tests/rundir/test_axis_parts.py``).
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from lingdiag.analysis.frames import load
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import Plan, RunResult, evaluate, plan, run
    from lingdiag.errors import (
        BackendError,
        CapabilityError,
        ConfigError,
        DatasetError,
        LingdiagError,
        MissingDependency,
        RunError,
        UnknownNameError,
    )
    from lingdiag.records import (
        UNFINISHED,
        UNPARSED,
        ChatMessage,
        Constraint,
        Generation,
        GenerationRequest,
        Item,
        ItemRecord,
        LogLikelihood,
        LoglikelihoodRequest,
        Prediction,
        ResultRow,
    )
    from lingdiag.suite import Axis, Condition, Dataset, Strategy, Suite, register_suite

_HOMES = {
    "load": "lingdiag.analysis.frames",
    "RunConfig": "lingdiag.config",
    **dict.fromkeys(("Plan", "RunResult", "evaluate", "plan", "run"), "lingdiag.engine.run"),
    **dict.fromkeys(("BackendError", "CapabilityError", "ConfigError", "DatasetError", "LingdiagError",
                     "MissingDependency", "RunError", "UnknownNameError"), "lingdiag.errors"),
    **dict.fromkeys(("UNFINISHED", "UNPARSED", "ChatMessage", "Constraint", "Generation", "GenerationRequest", "Item",
                     "ItemRecord", "LogLikelihood", "LoglikelihoodRequest", "Prediction", "ResultRow"),
                    "lingdiag.records"),
    **dict.fromkeys(("Axis", "Condition", "Dataset", "Strategy", "Suite", "register_suite"), "lingdiag.suite"),
}
"""Each public name → the module it is imported from on first use."""


def __getattr__(name: str) -> _Any:
    """A public name, imported from its module on first use (then kept here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names and the public names not imported yet."""
    return sorted({*globals(), *_HOMES})


__all__ = [
    "UNFINISHED",
    "UNPARSED",
    "Axis",
    "BackendError",
    "CapabilityError",
    "ChatMessage",
    "Condition",
    "ConfigError",
    "Constraint",
    "Dataset",
    "DatasetError",
    "Generation",
    "GenerationRequest",
    "Item",
    "ItemRecord",
    "LingdiagError",
    "LogLikelihood",
    "LoglikelihoodRequest",
    "MissingDependency",
    "Plan",
    "Prediction",
    "ResultRow",
    "RunConfig",
    "RunError",
    "RunResult",
    "Strategy",
    "Suite",
    "UnknownNameError",
    "evaluate",
    "load",
    "plan",
    "register_suite",
    "run",
]
