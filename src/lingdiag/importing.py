"""Deprecated path, kept for one release: the module is :mod:`lingdiag.io.importing`."""

import sys
import warnings
from importlib import import_module

warnings.warn("lingdiag.importing moved to lingdiag.io.importing; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
# The same module object under both names, so attribute lookups and monkeypatching see one module.
sys.modules[__name__] = import_module("lingdiag.io.importing")
