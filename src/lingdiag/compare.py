"""Deprecated path, kept for one release: the module is :mod:`lingdiag.analysis.compare`."""

import sys
import warnings
from importlib import import_module

warnings.warn("lingdiag.compare moved to lingdiag.analysis.compare; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
# The same module object under both names, so attribute lookups and monkeypatching see one module.
sys.modules[__name__] = import_module("lingdiag.analysis.compare")
