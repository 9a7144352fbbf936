"""lingdiag: controlled linguistic diagnostic evaluations of language models."""

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
