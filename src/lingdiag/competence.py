"""Deprecated path, kept for one release: the module is :mod:`lingdiag.analysis.competence`."""

import sys
import warnings
from importlib import import_module

warnings.warn("lingdiag.competence moved to lingdiag.analysis.competence; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
# The same module object under both names, so attribute lookups and monkeypatching see one module.
sys.modules[__name__] = import_module("lingdiag.analysis.competence")
